"""tilelang.Target: one value, parsed once in C++, for every spelling TileLang users write."""
import pytest

import tilelang
from tilelang.errors import TileLangUnsupportedError


@pytest.mark.parametrize("spec,canonical,kind,arch", [
    ("cpu", "cpu", "cpu", ""), ("c", "cpu", "cpu", ""), ("llvm", "cpu", "cpu", ""),
    ("cuda", "cuda", "cuda", "sm_80"), ("cuda -arch=sm_90a", "cuda -arch=sm_90a", "cuda", "sm_90a"),
    ({"kind": "cuda", "arch": "sm_80"}, "cuda -arch=sm_80", "cuda", "sm_80"),
    ("cuda:sm_89", "cuda -arch=sm_89", "cuda", "sm_89"), ("cuda -arch sm_86", "cuda -arch=sm_86", "cuda", "sm_86"),
    ("hip", "hip", "hip", "gfx90a"), ({"kind": "hip", "arch": "gfx942"}, "hip -arch=gfx942", "hip", "gfx942"),
    ("hip -mcpu=gfx950", "hip -arch=gfx950", "hip", "gfx950"),  # TVM's ROCm spelling (TileLang's CDNA4 example)
    ("metal", "metal", "metal", ""), ("opencl", "opencl", "opencl", ""),
])
def test_spellings(spec, canonical, kind, arch):
    t = tilelang.Target(spec)
    assert (str(t), t.kind, t.arch) == (canonical, kind, arch)
    assert tilelang.Target(str(t)) == t  # the canonical spelling parses back to the same target


def test_limits_and_features():
    assert tilelang.Target("cuda -arch=sm_86").smem_limit == 99 * 1024
    h = tilelang.Target("cuda -arch=sm_90a")
    assert h.smem_limit == 227 * 1024 and "wgmma" in h.features and "tma" in h.features
    assert "wgmma" not in tilelang.Target("cuda -arch=sm_90").features
    hip = tilelang.Target("hip")
    assert (hip.smem_limit, hip.warp_size, hip.max_threads) == (64 * 1024, 64, 1024)
    cpu = tilelang.Target("cpu -mattr=+avx512f")  # adds what AVX-512F needs (test_cpu_isa.py)
    assert "avx512f" in cpu.features and "avx2" in cpu.features
    cpu = tilelang.Target("cpu -mattr=+avx512f,-avx2")  # removes what needs AVX2
    assert "avx512f" not in cpu.features and "avx2" not in cpu.features


def test_auto_is_the_cpu_without_a_gpu():
    from tilelang import _ffi
    assert str(tilelang.Target("auto")) == ("cuda" if _ffi.cuda_driver_available() else "cpu")


def test_auto_with_the_emulator_is_cuda():
    """TileLang's autotune examples pass target="auto"; with the emulator (which runs GPU kernels only) that is
    CUDA, not the CPU. Before: "execution_backend 'emulator' runs GPU kernels; target 'cpu' is not one"."""
    import numpy as np
    import tilelang.language as T

    @T.prim_func
    def add(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                B[i] = A[i] + 1.0

    for backend in ("emulator", "ptx"):
        k = tilelang.compile(add, target="auto", execution_backend=backend)
        assert k.kind == "cuda"
        a, b = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
        k(a, b)
        np.testing.assert_array_equal(b, a + 1)


@pytest.mark.parametrize("spec,msg", [
    ("tpu", "unknown target kind 'tpu'"), ("cuda -arch=sm_70", "sm_70 is not supported"),
    ("cuda -foo=1", "unknown option -foo for target kind cuda"), ("hip -arch=gfx1100", "gfx1100 is not known"),
    ({"arch": "sm_80"}, "needs a 'kind'"),
])
def test_bad_targets_say_what_is_accepted(spec, msg):
    with pytest.raises(TileLangUnsupportedError, match=msg):
        tilelang.Target(spec)


def test_pass_configs_are_typed_in_cpp():
    from tilelang import _ffi
    from tilelang.errors import TileLangArgumentError

    assert "tl.disable_async_copy" in _ffi.pass_config_keys()
    _ffi.check_pass_configs({"tl.disable_async_copy": "1", "cpu.compile_flags": "-O2"})
    with pytest.raises(TileLangArgumentError, match="takes a boolean, got 'maybe'"):
        _ffi.check_pass_configs({"tl.disable_async_copy": "maybe"})
    with pytest.raises(TileLangArgumentError, match="unknown pass config key 'tl.bogus'; the known keys are "
                                                    "cpu.compile_flags, emulator.check_races"):
        _ffi.check_pass_configs({"tl.bogus": "1"})
