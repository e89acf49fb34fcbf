"""The one compile entry point and the backend registry (src/target/backend.h): every target compiles
through _ffi.compile into a CompiledKernel (lowered IR, source, binary bytes, info, launch description),
and a runtime module loads from that artifact alone."""
import os
import sys

import numpy as np
import pytest

import kernels as K
import tilelang
from tilelang import _ffi
from tilelang.errors import TileLangUnsupportedError

_kmod = sys.modules["tilelang.jit.kernel"]


def _seed():
    seed = int(os.environ.get("TL_TEST_SEED", np.random.SeedSequence().entropy % (2**31)))
    print(f"seed {seed} (TL_TEST_SEED replays)")
    return seed


def test_registry_lists_the_backends_and_their_traits():
    kinds = _ffi.backend_kinds()
    assert "cpu" in kinds and "cuda" in kinds
    header, fragments, names, emulatable, fork_safe = _ffi.backend_info("cuda")
    assert header == "cuda" and emulatable and "mma_C" in fragments and names[0] == "cuda"
    assert _ffi.backend_info("cpu")[3] is False and fork_safe
    if "opencl" in kinds:
        assert _ffi.backend_info("opencl")[4] is False  # compiled in the autotuner's own process
    # a target kind the parser knows but no backend serves: a clear error listing the served ones
    for kind in [k for k in ("hip", "metal") if k not in kinds]:
        with pytest.raises(TileLangUnsupportedError, match=rf"target '{kind}'.*available targets are .*'cpu'"):
            tilelang.compile(K.elementwise_add(), target=kind)


def test_compiled_kernel_carries_everything_the_tools_show(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    f = K.matmul(256, 256, 128, 128, 128, 32)
    ck = _ffi.compile(f, "cuda -arch=sm_80", {}, _kmod.include_dir(), True, "", True, True)
    assert ck.binary_format == "cubin" and ck.binary[:4] == b"\x7fELF" and ".entry" in ck.ptx
    assert ck.kernel_name in ck.source and ck.threads == 128 and ck.smem_bytes > 0
    assert [name for name, *_ in ck.trace][-1] == "InsertBarriers"
    assert _ffi.structural_equal(ck.trace[-1][1], ck.lowered)
    assert ck.grid([]) == [2, 2, 1]
    # the JIT holds exactly this: same source, same binary
    k = tilelang.compile(f, target="cuda -arch=sm_80")
    assert k.get_kernel_source() == ck.source and k.compiled.binary == ck.binary


def test_a_cpu_module_loads_from_the_artifact_bytes_alone(tmp_path, monkeypatch):
    """The runtime gets the binary and the launch description, nothing else: with the disk-cache file
    gone (as on another machine), the bytes still load and run."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(_seed())
    n = 1000
    ck = _ffi.compile(K.elementwise_add(block=128), "cpu", {}, _kmod.include_dir(), True, "",
                      True, False)
    assert ck.binary_format == "so" and ck.binary[:4] == b"\x7fELF"
    os.remove(ck.binary_path)
    mod = _ffi.load_module(ck)
    assert mod.device == "cpu" and mod.kernel_name == "tl_entry"
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    descs = [_kmod._to_arg(x, ck.func, i)[0] for i, x in enumerate((a, b, c))]
    mod.launch(descs)
    np.testing.assert_allclose(c, a.astype(np.float64) + b, rtol=1e-6)
    assert os.listdir(tmp_path) != [] and not any(d.startswith("load-") for d in os.listdir(tmp_path))


def test_execution_backend_names_come_from_the_registry():
    with pytest.raises(TileLangUnsupportedError, match=r"'emulator' runs GPU kernels; target 'cpu'"):
        tilelang.compile(K.elementwise_add(), target="cpu", execution_backend="emulator")
    with pytest.raises(TileLangUnsupportedError, match=r"not available for target 'cuda'; use one of .*'emulator'"):
        tilelang.compile(K.elementwise_add(), target="cuda", execution_backend="vulkan")


def test_a_kernel_built_for_the_emulator_has_no_binary_to_load():
    k = tilelang.compile(K.elementwise_add(), target="cuda", execution_backend="emulator")
    assert k.compiled.binary_format == "" and k._mod is None
    with pytest.raises(TileLangUnsupportedError, match="compiled without a binary"):
        _ffi.load_module(k.compiled)


def test_with_no_target_the_environment_default_is_used_as_in_tilelang(monkeypatch):
    """No target given (tilelang.compile, @tilelang.jit): $TILELANG_DEFAULT_TARGET and $TILELANG_EXECUTION_BACKEND,
    as TileLang's; an explicit target, "auto" included, is kept (this machine's "auto" is the CPU: no GPU)."""
    import numpy as np
    import tilelang.language as T

    @T.prim_func
    def add1(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                B[i] = A[i] + 1

    @tilelang.jit
    def factory(n):
        return add1

    monkeypatch.setenv("TILELANG_DEFAULT_TARGET", "cuda -arch=sm_80")
    monkeypatch.setenv("TILELANG_EXECUTION_BACKEND", "emulator")
    k = tilelang.compile(add1)
    assert k.kind == "cuda" and k.execution_backend == "emulator", (k.kind, k.execution_backend)
    assert factory(1).kind == "cuda"
    a = np.arange(64, dtype=np.float32)
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, a + 1)
    auto = tilelang.Target("auto").kind  # this machine's: the CPU where no GPU is present
    assert tilelang.compile(add1, target="auto", execution_backend="auto").kind == auto
    monkeypatch.delenv("TILELANG_DEFAULT_TARGET")
    monkeypatch.delenv("TILELANG_EXECUTION_BACKEND")
    assert tilelang.compile(add1).kind == auto
