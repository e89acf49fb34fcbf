"""CUDA lowering checked without a GPU: kernels compiled for target "cuda" run in the emulator, lane by
lane, on the thread-level IR the CUDA code generator prints, and must match a float64 NumPy reference
on fresh random inputs. The emulator also reports what a GPU would not (races, out-of-bounds
accesses, uninitialised reads); the last tests prove each report fires.
"""
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangEmulationError

import kernels

NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}


def _rng():
    """A fresh seed per test (TL_TEST_SEED to replay one), printed so that a failure names it."""
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def emu(func, **kw):
    return tilelang.compile(func, target="cuda", execution_backend="emulator", **kw)


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(NP[dtype])


def f64(x):
    return np.asarray(x).astype(np.float64)


def gemm_ref(a, b, ta, tb):
    A, B = f64(a), f64(b)
    return (A.T if ta else A) @ (B.T if tb else B)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("M,N,K", [(256, 256, 256), (200, 136, 72)])
def test_reference_gemm(M, N, K, dtype):
    """The demo's kernel (128x128x32 tiles, 128 threads, 2 stages); fp32 output so the check is tight."""
    rng = _rng()
    k = emu(kernels.matmul(M, N, K, dtype=dtype, out_dtype="float32"))
    a, b = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, gemm_ref(a, b, False, False), rtol=1e-5, atol=1e-4)


def test_reference_gemm_fp16_output():
    rng = _rng()
    k = emu(kernels.matmul(256, 256, 256))
    a, b = rand(rng, (256, 256), "float16"), rand(rng, (256, 256), "float16")
    c = np.zeros((256, 256), np.float16)
    k(a, b, c)
    ref = gemm_ref(a, b, False, False)
    assert np.abs(f64(c) - ref).max() <= np.abs(ref).max() * 2 ** -10  # fp16 output rounding


@pytest.mark.parametrize("policy", ["Square", "FullRow", "FullCol"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_transposes_and_warp_policies(ta, tb, policy):
    rng = _rng()
    M, N, K = 136, 72, 80
    dtype = "bfloat16" if ta != tb else "float16"
    f = kernels.matmul_transposed(M, N, K, 64, 64, 32, trans_A=ta, trans_B=tb, dtype=dtype, out_dtype="float32",
                                  policy=getattr(T.GemmWarpPolicy, policy))
    k = emu(f)
    a = rand(rng, (K, M) if ta else (M, K), dtype)
    b = rand(rng, (N, K) if tb else (K, N), dtype)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, gemm_ref(a, b, ta, tb), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_pipelined_stages(stages):
    rng = _rng()
    M, N, K = 64, 64, 224  # 7 k-steps: tails of the prologue and of the steady state
    k = emu(kernels.matmul(M, N, K, 64, 64, 32, out_dtype="float32", num_stages=stages))
    if stages > 1:
        assert f"stages" in k.get_shared_memory_report() and f"  {stages}  " in k.get_shared_memory_report()
    a, b = rand(rng, (M, K), "float16"), rand(rng, (K, N), "float16")
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, gemm_ref(a, b, False, False), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("bm,bn,threads", [(128, 256, 256), (64, 64, 32)])
def test_gemm_warp_counts(bm, bn, threads):
    rng = _rng()
    M, N, K = 256, 256, 64
    k = emu(kernels.matmul(M, N, K, bm, bn, 32, out_dtype="float32", threads=threads))
    a, b = rand(rng, (M, K), "float16"), rand(rng, (K, N), "float16")
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, gemm_ref(a, b, False, False), rtol=1e-5, atol=1e-4)


def test_splitk_atomic_add():
    rng = _rng()
    M, N, K = 136, 128, 256
    k = emu(kernels.matmul_splitk(M, N, K, 64, 64, 32, split_k=4))
    a, b = rand(rng, (M, K), "float16"), rand(rng, (K, N), "float16")
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, gemm_ref(a, b, False, False), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("causal,stages", [(False, 1), (True, 1), (True, 2)])
def test_flashattention(causal, stages):
    rng = _rng()
    B, H, S, D = 1, 2, 128, 64
    k = emu(kernels.flashattn(B, H, S, D, causal, num_stages=stages))
    q, kk, v = (rand(rng, (B, H, S, D), "float16") for _ in range(3))
    o = np.zeros_like(q)
    k(q, kk, v, o)
    s = f64(q) @ f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(f64(o), p @ f64(v), atol=2e-2)  # P is rounded to fp16 before P @ V


def test_softmax_and_rmsnorm_ragged_rows():
    rng = _rng()
    M, N = 70, 128  # 70 rows: the last block is partial
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    emu(kernels.softmax(M, N, 8))(x, y)
    e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    emu(kernels.rms_norm(M, N, 4))(x, y)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5)


def _reduce_kernel(kind, dim, M, N, from_gemm):
    """Reduces a tile along `dim`: from a gemm accumulator (mma layout) or from a loaded tile."""
    out_len = M if dim == 1 else N
    red = getattr(T, f"reduce_{kind}")

    @T.prim_func
    def main(A: T.Tensor((M, 32), "float16"), B: T.Tensor((32, N), "float16"), X: T.Tensor((M, N), "float32"),
             R: T.Tensor((out_len,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, 32), "float16")
            B_s = T.alloc_shared((32, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            r = T.alloc_fragment((out_len,), "float32")
            if from_gemm:
                T.copy(A, A_s)
                T.copy(B, B_s)
                T.gemm(A_s, B_s, acc, clear_accum=True)
            else:
                T.copy(X, acc)
            red(acc, r, dim=dim)
            T.copy(r, R)

    return main


@pytest.mark.parametrize("from_gemm", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("kind", ["sum", "max", "min", "abssum", "absmax"])
def test_reductions(kind, dim, from_gemm):
    rng = _rng()
    M, N = 64, 32
    a, b = rand(rng, (M, 32), "float16"), rand(rng, (32, N), "float16")
    x = rng.standard_normal((M, N)).astype(np.float32)
    r = np.zeros(M if dim == 1 else N, np.float32)
    emu(_reduce_kernel(kind, dim, M, N, from_gemm))(a, b, x, r)
    src = gemm_ref(a, b, False, False) if from_gemm else f64(x)
    ref = {"sum": lambda t: t.sum(dim), "max": lambda t: t.max(dim), "min": lambda t: t.min(dim),
           "abssum": lambda t: np.abs(t).sum(dim), "absmax": lambda t: np.abs(t).max(dim)}[kind](src)
    np.testing.assert_allclose(r, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("scope", ["shared", "fragment"])
def test_cumsum(scope):
    rng = _rng()
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = np.zeros_like(x)
    emu(kernels.cumsum(64, 64, 32, 32, dim=1, reverse=scope == "fragment", scope=scope))(x, y)
    t = f64(x).reshape(2, 32, 2, 32)
    ref = (np.flip(np.cumsum(np.flip(t, 3), 3), 3) if scope == "fragment" else np.cumsum(t, 3)).reshape(64, 64)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_dynamic_length_elementwise():
    rng = _rng()
    k = emu(kernels.elementwise_add())
    for n in (1, 300, 1000):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        c = np.zeros(n, np.float32)
        k(a, b, c)
        np.testing.assert_array_equal(c, a + b)


# ---- what the emulator reports --------------------------------------------------------------------

def test_missing_barriers_are_reported_as_races():
    rng = _rng()
    a, b = rand(rng, (64, 64), "float16"), rand(rng, (64, 64), "float16")
    f = kernels.matmul(64, 64, 64, 64, 64, 32, num_stages=2)
    emu(f)(a, b, np.zeros((64, 64), np.float16))  # with barriers: clean
    k = emu(f, pass_configs={"tl.disable_barrier_insertion": True})
    with pytest.raises(TileLangEmulationError) as e:
        k(a, b, np.zeros((64, 64), np.float16))
    kinds = {r[0] for r in e.value.reports}
    assert "race" in kinds
    msg = str(e.value)
    assert "A_shared" in msg or "B_shared" in msg
    assert "kernels.py" in msg and "block (" in msg and "thread" in msg


def test_corrupted_fragment_layout_gives_wrong_numbers():
    rng = _rng()
    a, b = rand(rng, (64, 64), "float16"), rand(rng, (64, 64), "float16")
    f = kernels.matmul(64, 64, 64, 64, 64, 32, out_dtype="float32")
    c = np.zeros((64, 64), np.float32)
    emu(f, pass_configs={"tl.test_corrupt_mma_layout": True})(a, b, c)
    assert np.abs(c - gemm_ref(a, b, False, False)).max() > 1.0


def test_out_of_range_index_is_reported_not_performed():
    """Global element accesses are guarded by the compiler (InjectBoundGuards); a shared-memory index
    past the tile is not, and the emulator reports it instead of performing it (an index a loop provably
    drives past the tile is a compile error: test_on_chip_bounds.py; here the shift is a run-time scalar)."""
    n = 128

    @T.prim_func
    def shift(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), off: T.int32):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((n,), "float32")
            T.copy(A, S)
            for i in T.Parallel(n):
                B[i] = S[i + off]  # reads S[128] in the last lane when off is 1

    a = np.arange(n, dtype=np.float32)
    b = np.zeros(n, np.float32)
    with pytest.raises(TileLangEmulationError) as e:
        emu(shift)(a, b, 1)
    assert e.value.reports[0][0] == "out_of_bounds"
    assert "S" in e.value.reports[0][1] and "128" in e.value.reports[0][1]
    assert "test_emulator.py" in e.value.reports[0][1]
    np.testing.assert_array_equal(b[:-1], a[1:])  # the in-range lanes ran


def test_out_of_range_global_load_reads_zero():
    n = 128

    @T.prim_func
    def shift(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                B[i] = A[i + 1]  # A[128] is outside: reads 0, as in TileLang

    a = np.arange(1, n + 1, dtype=np.float32)
    b = np.full(n, -1.0, np.float32)
    emu(shift)(a, b)
    np.testing.assert_array_equal(b, np.append(a[1:], 0.0))


def test_uninitialised_shared_read_is_reported():
    @T.prim_func
    def stale(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((128,), "float32")
            T.copy(A, S[0:64])
            for i in T.Parallel(64):
                B[i] = S[i + 64]  # never written

    with pytest.raises(TileLangEmulationError) as e:
        emu(stale)(np.ones(64, np.float32), np.zeros(64, np.float32))
    assert any(r[0] == "uninitialized_read" and "'S'" in r[1] for r in e.value.reports)


def _register_operand_gemm(M, N, K, reg, trans):
    """C = op(A) @ op(B) with A (reg='A', policy FullRow) or B (reg='B', policy FullCol) loaded into
    registers first: the fragment/shared and shared/fragment operand forms of T.gemm."""
    B_shape = (N, K) if trans else (K, N)
    policy = T.GemmWarpPolicy.FullRow if reg == "A" else T.GemmWarpPolicy.FullCol

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor(B_shape, "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared(B_shape, "float16")
            C_l = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            if reg == "A":
                A_r = T.alloc_fragment((M, K), "float16")
                T.copy(A_s, A_r)
                T.gemm(A_r, B_s, C_l, transpose_B=trans, clear_accum=True, policy=policy)
            else:
                B_r = T.alloc_fragment(B_shape, "float16")
                T.copy(B_s, B_r)
                T.gemm(A_s, B_r, C_l, transpose_B=trans, clear_accum=True, policy=policy)
            T.copy(C_l, C)

    return main


@pytest.mark.parametrize("reg,trans", [("A", False), ("A", True), ("B", False), ("B", True)])
def test_gemm_register_operands(reg, trans):
    rng = _rng()
    M, N, K = 64, 64, 32
    f = _register_operand_gemm(M, N, K, reg, trans)
    k = emu(f)
    assert k.layouts[f"{reg}_r"].startswith("mma_C" if reg == "A" else "mma_B")
    a = rand(rng, (M, K), "float16")
    b = rand(rng, (N, K) if trans else (K, N), "float16")
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, gemm_ref(a, b, False, trans), rtol=1e-5, atol=1e-4)
    # and the same program compiles for a GPU, with B (or A) never going through ldmatrix
    g = tilelang.compile(f, target="cuda -arch=sm_80")
    assert g.get_kernel_source().count("tl::ldmatrix<") == 1 and "mma.sync" in g.get_ptx()


def test_profiler_on_an_emulated_kernel():
    """do_bench times the emulator with the wall clock; assert_allclose makes inputs of the right
    dtypes and shapes and catches a wrong reference."""
    k = emu(kernels.matmul(128, 128, 64, 64, 64, 32, out_dtype="float32"), out_idx=[2])
    p = k.get_profiler()
    assert p.do_bench(n_warmup=1, n_repeat=3) > 0
    p.assert_allclose(lambda a, b: f64(a) @ f64(b), atol=1e-3, rtol=1e-3)
    with pytest.raises(AssertionError):
        p.assert_allclose(lambda a, b: f64(a) @ f64(b) + 1.0, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("fn", ["exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "erf",
                                "floor", "ceil", "round", "trunc", "sin", "cos", "abs"])
def test_math_intrinsics(fn):
    """Every T.* math function compiles for sm_80 (the device header has it) and matches NumPy in the emulator."""
    import math

    n = 256
    op = getattr(T, fn)

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                Y[i] = op(X[i])

    rng = _rng()
    x = (rng.random(n) * 4 + 0.1).astype(np.float32) * np.where(np.arange(n) % 2, 1, -1).astype(np.float32)
    if fn in ("log", "log2", "log10", "sqrt", "rsqrt"):
        x = np.abs(x)
    y = np.zeros_like(x)
    emu(main)(x, y)
    ref = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
           "rsqrt": lambda t: 1 / np.sqrt(t), "tanh": np.tanh, "sigmoid": lambda t: 1 / (1 + np.exp(-t)),
           "erf": np.vectorize(math.erf), "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
           "sin": np.sin, "cos": np.cos, "abs": np.abs}[fn](f64(x))
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-6)
    assert "tl::" + fn + "(" in tilelang.compile(main, target="cuda -arch=sm_80").get_kernel_source()


def test_device_assert_and_print():
    n = 256

    @T.prim_func
    def checked(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.print(A[3], msg="a3=")
            for i in T.Parallel(n):
                T.device_assert(A[i] >= 0.0, "A must be non-negative")
                A[i] = A[i] + 1.0

    k = emu(checked)
    a = np.arange(n, dtype=np.float32)
    k(a)  # passes
    np.testing.assert_array_equal(a, np.arange(n) + 1)
    a[17] = -5
    with pytest.raises(TileLangEmulationError) as e:
        k(a)
    assert e.value.reports[0][0] == "assert"
    assert "T.device_assert failed: A must be non-negative" in e.value.reports[0][1]
    # element 17 belongs to thread 4 (striped layout, 4 consecutive elements per thread)
    assert "block (0, 0, 0) thread 4:" in e.value.reports[0][1] and "test_emulator.py" in e.value.reports[0][1]
    src = tilelang.compile(checked, target="cuda -arch=sm_80").get_kernel_source()
    assert "tl::device_assert(" in src and "tl::print(" in src
