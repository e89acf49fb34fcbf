"""Names TileLang programs import and call: each either works with TileLang's meaning (checked here
against NumPy in float64) or raises TileLangUnsupportedError naming itself, with the source location."""
import warnings

import numpy as np
import pytest

import tilelang
import tilelang.language as T
import tilelang.testing
from tilelang import PassConfigKey
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 7


# ---- top-level helpers -----------------------------------------------------------------------------------
def test_cdiv_and_powers_of_two():
    assert [tilelang.cdiv(a, 8) for a in (1, 8, 9, 100)] == [1, 1, 2, 13]
    assert [tilelang.math.next_power_of_2(n) for n in (0, 1, 2, 3, 17, 64, 65)] == [1, 1, 2, 4, 32, 64, 128]
    assert tilelang.next_power_of_2 is tilelang.math.next_power_of_2
    n = T.dynamic("n")
    assert "n + 7" in str(tilelang.cdiv(n, 8))  # an IR size gives an IR expression (T.ceildiv)


def test_dtypes_as_values_and_annotations():
    assert T.float == T.float32 and T.double == T.float64 and T.half == T.float16 and T.int == T.int32
    assert T.dtype("float16") == T.float16 and T.dtype(np.float32) == T.float32 and T.dtype(T.bfloat16) == T.bfloat16
    assert isinstance(T.float16, T.dtype)
    assert (T.float16.bits, T.int8.itemsize, T.float32.as_numpy()) == (16, 1, np.dtype(np.float32))
    with pytest.raises(TileLangUnsupportedError, match="float8_e4m3fnuz"):
        T.cast(1.0, T.float8_e4m3fnuz)  # any use of a name this compiler lacks says it is not supported
    assert T.tfloat32 == T.float32  # TileLang's tf32 operands: float32 storage (tests/python/test_tf32_gemm.py)

    @T.prim_func
    def scale(A: T.Tensor((37,), T.float), s: T.float):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if i < 37:
                    A[i] = T.Cast(T.float, T.Cast(T.int32, A[i] * s))  # truncation towards zero

    k = tilelang.compile(scale, target="cpu")
    a = np.random.default_rng(SEED).standard_normal(37).astype(np.float32) * 10
    want = np.trunc(a.astype(np.float64) * 2.5)
    k(a, 2.5)
    np.testing.assert_allclose(a, want)


def test_pass_config_keys():
    from tilelang.transform import normalize_pass_configs

    assert PassConfigKey.TL_DISABLE_TMA_LOWER.value == "tl.disable_tma_lower"
    assert len(PassConfigKey) >= 40
    out = normalize_pass_configs({PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True,
                                  PassConfigKey.TL_ENABLE_ASYNC_COPY: False,
                                  PassConfigKey.TL_DISABLE_TMA_LOWER: True, "emulator.check_races": False})
    assert out == {"tl.user_sync_shared": True, "tl.disable_async_copy": True, "tl.disable_tma_lower": True,
                   "emulator.check_races": False}
    with pytest.warns(UserWarning, match="tl.emit_line_directives' is accepted but not implemented"):
        assert normalize_pass_configs({PassConfigKey.TL_EMIT_LINE_DIRECTIVES: True}) == {}
    with pytest.raises(TileLangTypeError, match="unknown pass config key 'tl.no_such_key'"):
        normalize_pass_configs({"tl.no_such_key": 1})


def test_testing_helpers():
    tilelang.testing.set_random_seed(3)
    x = np.random.rand(4)
    tilelang.testing.set_random_seed(3)
    assert np.array_equal(x, np.random.rand(4))
    a = np.zeros(1000)
    b = a.copy()
    b[0] = 1.0
    tilelang.testing.torch_assert_close(a, b, atol=1e-3, rtol=0, max_mismatched_ratio=0.001)  # 1 of 1000 allowed
    b[1] = 1.0
    with pytest.raises(AssertionError, match="2 of 1000 elements"):
        tilelang.testing.torch_assert_close(a, b, atol=1e-3, rtol=0, max_mismatched_ratio=0.001)
    with pytest.raises(AssertionError):
        tilelang.testing.assert_allclose(a, b, atol=1e-3)
    def needs_gpu():
        pass

    marked = tilelang.testing.requires_cuda(needs_gpu)
    assert [m.name for m in marked.pytestmark] == ["skipif"]
    assert tilelang.testing.requires_cuda_compute_version(8, 0).mark.name == "skipif"


def test_layout_objects():
    lay = T.Layout((4, 8), lambda i, j: (j, i))
    assert lay.map_forward_index([1, 6]) == (6, 1) and lay.get_input_shape() == [4, 8]
    frag = T.Fragment((16, 16), forward_thread_fn=lambda i, j: (i % 8) * 4 + j // 4)
    assert frag.map_forward_thread([9, 13]) == 7
    buf = tilelang._ffi.buffer("A_shared", "float16", [T.int32(64), T.int32(64)], "shared", None)
    sw = tilelang.layout.make_swizzled_layout(buf)
    images = {sw.map_forward_index([i, j]) for i in range(64) for j in range(64)}
    assert len(images) == 64 * 64  # a permutation of the tile
    assert any(sw.map_forward_index([i, 0]) != (i, 0) for i in range(64))  # and not the identity


# ---- kernel-level names -------------------------------------------------------------------------------------
@T.macro
def clamp_into(dst, src, i, lo, hi):
    dst[i] = T.clamp(src[i], lo, hi)


@T.macro
def squared(x):
    y = x * x
    return y


def test_macro_clamp_assume_and_hints_on_cpu():
    n = 53

    @T.prim_func
    def kernel(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32), C: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
            T.disable_warp_group_reg_alloc()
            for i in T.Parallel(32):
                idx = bx * 32 + i
                T.assume(idx >= 0)
                if idx < n:
                    clamp_into(B, A, idx, -0.5, 0.5)
                    C[idx] = squared(A[idx])

    text = kernel.script()
    assert "T.min(T.max(A[" in text and "B[" in text
    assert str(kernel) == text  # print(func) shows the DSL
    k = tilelang.compile(kernel, target="cpu")
    a = np.random.default_rng(SEED).standard_normal(n).astype(np.float32)
    b = np.empty_like(a)
    c = np.empty_like(a)
    k(a, b, c)
    np.testing.assert_allclose(b, np.clip(a.astype(np.float64), -0.5, 0.5))
    np.testing.assert_allclose(c, a.astype(np.float64) ** 2, rtol=1e-6)


def test_parse_time_control_flow():
    def build(use_square, n=40):
        @T.prim_func
        def kernel(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
            with T.Kernel(1, threads=64) as bx:
                for i in T.Parallel(64):
                    if i < n:
                        if use_square:  # a Python value: decided while parsing
                            v = A[i] * A[i]
                        else:
                            v = A[i] + 1.0
                        B[i] = v  # defined after the `if`, whichever branch was taken
                        k = 1
                        while k < 8:  # a parse-time while: three doublings
                            B[i] = B[i] * 2.0
                            k = k * 2

        return kernel

    a = np.random.default_rng(SEED).standard_normal(40).astype(np.float32)
    for flag, want in ((True, 8 * a.astype(np.float64) ** 2), (False, 8 * (a.astype(np.float64) + 1))):
        b = np.empty_like(a)
        tilelang.compile(build(flag), target="cpu")(a, b)
        np.testing.assert_allclose(b, want, rtol=1e-6)


def test_stepped_loops_and_cache_switch(monkeypatch):
    @T.prim_func
    def stepped(A: T.Tensor((37,), T.float32)):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(3, 37, 5):
                A[i] = A[i] + 1.0
            for j in range(36, 0, -7):
                A[j] = A[j] + 10.0

    a = np.zeros(37, np.float32)
    tilelang.compile(stepped, target="cpu")(a)
    want = np.zeros(37)
    want[3:37:5] += 1.0
    want[36:0:-7] += 10.0
    np.testing.assert_array_equal(a, want)
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    assert tilelang.is_cache_enabled()
    tilelang.disable_cache()
    assert not tilelang.is_cache_enabled()
    tilelang.enable_cache()
    assert tilelang.is_cache_enabled()


@pytest.mark.parametrize("what,body,match", [
    ("refusing", "A[0] = T.float8_e4m3fnuz(0)", "T.float8_e4m3fnuz is not supported"),
    ("unknown", "T.tcgen05_no_such_op(A)", "T.tcgen05_no_such_op is not supported by TileLang-C++"),
])
def test_unsupported_names_say_so_with_location(tmp_path, what, body, match):
    src = tmp_path / f"prog_{what}.py"
    src.write_text(f'''import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
            {body}
''')
    import runpy

    with pytest.raises(TileLangUnsupportedError, match=match) as info:
        runpy.run_path(str(src))
    assert f"{src}:7:" in str(info.value)


def test_tools_as_tilelang_users_call_them():
    from tilelang.profiler import TensorSupplyType

    assert [m.name for m in TensorSupplyType] == ["Integer", "Uniform", "Normal", "Randn", "Zero", "One", "Auto"]

    @tilelang.jit(out_idx=[-1], target="cpu")
    def add(n, block=64):
        @T.prim_func
        def k(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
                for i in T.Parallel(block):
                    if bx * block + i < n:
                        Y[bx * block + i] = X[bx * block + i] * 2.0

        return k

    tuned = tilelang.autotune(configs=[{"block": 32}, {"block": 64}], verbose=False, use_cache=False)(add)
    result = tuned(100, block=32)  # every tuned parameter given: that configuration, no tuning
    assert result.config == {"block": 32} and result.results == [] and result.latency is None
    x = np.arange(100, dtype=np.float32)
    np.testing.assert_allclose(result(x), 2 * x)

    prof = result.kernel.get_profiler()
    for backend in ("cupti", "cudagraph", "event"):
        with pytest.warns(UserWarning, match=f"backend='{backend}'.*wall clock"):
            assert prof.do_bench(backend=backend, n_warmup=1, n_repeat=3) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert prof.do_bench(backend="wall", n_warmup=1, n_repeat=3) > 0


def test_assert_statements():
    def build(block):
        @T.prim_func
        def kernel(A: T.Tensor((64,), T.float32)):
            assert block % 16 == 0, "block must be a multiple of 16"  # checked while parsing
            with T.Kernel(1, threads=block) as bx:
                for i in T.Parallel(block):
                    assert A[i] >= 0.0, "negative input"  # a kernel value: a device assertion
                    A[i] = T.sqrt(A[i])

        return kernel

    with pytest.raises(TileLangTypeError, match=r"test_names.py:\d+:\d+: assertion failed: block must be a multiple"):
        build(24)
    text = build(64).script()
    assert "device_assert" in text and "negative input" in text  # the same IR as T.device_assert
    a = np.linspace(0, 4, 64).astype(np.float32)
    tilelang.compile(build(64), target="cpu")(a)
    np.testing.assert_allclose(a, np.sqrt(np.linspace(0, 4, 64)), rtol=1e-6)
