"""Numeric tests of the CPU backend: every kernel is compiled with target="cpu", run on fresh random
NumPy inputs and compared with a float64 NumPy reference, with tolerances that fit the dtype.
Sizes include ragged ones (not multiples of the tile), so the guarded tails are exercised.

Compiled kernels are shared between tests through `_compile` (one g++ run per distinct kernel).
"""
import functools
import zlib

import ml_dtypes
import numpy as np
import pytest

import kernels as K
import tilelang
import tilelang.language as T

BF16 = ml_dtypes.bfloat16
NP_DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": BF16, "float64": np.float64}

# (rtol, atol) for a value produced in fp32 arithmetic and stored in the given dtype; the inputs are
# exactly representable (they are cast before the reference is computed), so the error is the fp32
# accumulation plus one rounding of the output.
# rtol is about twice the half-ulp rounding error of the dtype (fp16 2^-11, bf16 2^-8).
TOL = {"float32": (1e-5, 1e-4), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}


@functools.lru_cache(maxsize=None)
def _compile(factory, *args, out_idx=None, **kwargs):
    """Compiles factory(*args, **kwargs) once per session (out_idx given as a tuple)."""
    func = factory(*args, **kwargs)
    return tilelang.compile(func, target="cpu", out_idx=list(out_idx) if out_idx is not None else None)


def _rng(*key):
    """A generator seeded from the test's key (deterministic across runs, distinct across tests)."""
    return np.random.default_rng(zlib.crc32(repr(("tilelang-cpu", *key)).encode()))


def _rand(rng, shape, dtype, scale=1.0):
    """Random normal values, stored in `dtype`; never all zero."""
    x = (rng.standard_normal(shape) * scale).astype(NP_DTYPES[dtype])
    assert np.any(x.astype(np.float64) != 0)
    return x


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _assert_close(actual, expected, dtype, scale=1.0, what=""):
    rtol, atol = TOL[dtype]
    actual = _f64(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite values in the result"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale, err_msg=what)


# ---------------------------------------------------------------------------------------------------
# GEMM
# ---------------------------------------------------------------------------------------------------
def _gemm_reference(A, B, trans_A, trans_B):
    a, b = _f64(A), _f64(B)
    return (a.T if trans_A else a) @ (b.T if trans_B else b)


def _run_gemm(M, N, K_, bm, bn, bk, trans_A, trans_B, dtype, out_dtype):
    kernel = _compile(K.matmul_transposed, M, N, K_, bm, bn, bk, trans_A=trans_A, trans_B=trans_B, dtype=dtype,
                      out_dtype=out_dtype)
    rng = _rng("gemm", M, N, K_, trans_A, trans_B, dtype, out_dtype)
    A = _rand(rng, (K_, M) if trans_A else (M, K_), dtype)
    B = _rand(rng, (N, K_) if trans_B else (K_, N), dtype)
    C = np.full((M, N), np.nan, dtype=NP_DTYPES[out_dtype])  # every element must be written
    kernel(A, B, C)
    ref = _gemm_reference(A, B, trans_A, trans_B)
    # The fp32 accumulation error grows like sqrt(K) times the size of the terms.
    _assert_close(C, ref, out_dtype, scale=max(1.0, np.sqrt(K_) / 8),
                  what=f"gemm {M}x{N}x{K_} tA={trans_A} tB={trans_B} {dtype}->{out_dtype}")


TRANSPOSES = [(False, False), (False, True), (True, False), (True, True)]
TRANS_IDS = ["NN", "NT", "TN", "TT"]


@pytest.mark.parametrize("trans_A,trans_B", TRANSPOSES, ids=TRANS_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gemm_1000(dtype, trans_A, trans_B):
    """M = N = K = 1000 with 128x128x32 tiles: every tile dimension has a ragged tail."""
    _run_gemm(1000, 1000, 1000, 128, 128, 32, trans_A, trans_B, dtype, dtype)


@pytest.mark.parametrize("M,N,K_,bm,bn,bk,trans_A,trans_B,dtype,out_dtype", [
    (200, 136, 72, 64, 64, 32, False, False, "float32", "float32"),
    (200, 136, 72, 64, 64, 32, True, True, "float32", "float32"),
    (77, 45, 33, 32, 32, 16, False, True, "float16", "float16"),
    (129, 65, 100, 64, 64, 32, True, False, "bfloat16", "float32"),
    (1, 7, 5, 64, 64, 32, False, False, "float16", "float32"),
])
def test_gemm_ragged(M, N, K_, bm, bn, bk, trans_A, trans_B, dtype, out_dtype):
    _run_gemm(M, N, K_, bm, bn, bk, trans_A, trans_B, dtype, out_dtype)


def _demo_kernel():
    return K.demo_matmul_kernel()


def test_demo_gemm_1024_fp16():
    compiled_kernel = _compile(_demo_kernel)
    rng = _rng("demo")
    a = rng.standard_normal((1024, 1024)).astype(np.float16)
    b = rng.standard_normal((1024, 1024)).astype(np.float16)
    c = np.empty((1024, 1024), dtype=np.float16)
    compiled_kernel(a, b, c)
    ref = _f64(a) @ _f64(b)
    _assert_close(c, ref, "float16", scale=4.0, what="demo gemm")


def test_generated_source_uses_microkernel_and_openmp():
    src = _compile(_demo_kernel).get_kernel_source()
    # (the demo's B tile is packed by its copy, so its gemm is the packed-B entry point)
    assert "tl_cpu::gemm_packed_b<" in src, src
    assert "#pragma omp parallel" in src, src
    omp_for = src.find("#pragma omp for")
    assert omp_for >= 0, src
    # The grid-block loop is the loop right under `#pragma omp for`, and the tile work (the gemm call
    # and the stores) sits inside it.
    after = src[omp_for:].split("\n", 2)
    assert after[1].lstrip().startswith("for ("), src
    assert src.find("tl_cpu::gemm_packed_b<") > omp_for, src
    # Transposed operands reach the micro-kernel as template flags.
    src_tt = _compile(K.matmul_transposed, 200, 136, 72, 64, 64, 32, trans_A=True, trans_B=True,
                      dtype="float32", out_dtype="float32").get_kernel_source()
    assert "tl_cpu::gemm<true, true>" in src_tt.replace("  ", " "), src_tt


# ---------------------------------------------------------------------------------------------------
# Split-K GEMM with T.atomic_add of a fragment tile
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("M,N", [(200, 136), (256, 256)])
def test_gemm_splitk_atomic_add(M, N):
    K_ = 512
    kernel = _compile(K.matmul_splitk, M, N, K_, 64, 64, 32, split_k=4)
    rng = _rng("splitk", M, N)
    A = _rand(rng, (M, K_), "float16")
    B = _rand(rng, (K_, N), "float16")
    # The kernel adds into C: start from non-zero contents to check it accumulates rather than stores.
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    C = C0.copy()
    kernel(A, B, C)
    ref = _f64(C0) + _f64(A) @ _f64(B)
    _assert_close(C, ref, "float32", scale=4.0, what="split-K")


# ---------------------------------------------------------------------------------------------------
# Elementwise over a dynamic length; out_idx; scalar parameters
# ---------------------------------------------------------------------------------------------------
def test_elementwise_add_dynamic_length():
    kernel = _compile(K.elementwise_add)
    for n in (1000, 77, 256):  # ragged, shorter than a block, exact
        rng = _rng("add", n)
        A, B = _rand(rng, (n,), "float32"), _rand(rng, (n,), "float32")
        # C is the head of a larger buffer: a write past element n - 1 would show in the guard cells.
        guard = np.full((n + 8,), -7.0, dtype=np.float32)
        guard[:n] = np.nan
        C = guard[:n]
        kernel(A, B, C)
        np.testing.assert_allclose(_f64(C), _f64(A) + _f64(B), rtol=1e-6, atol=0, err_msg=f"n={n}")
        assert np.all(guard[n:] == -7.0), f"n={n}: the kernel wrote past the end of C"


def test_out_idx_single_output_allocated():
    kernel = _compile(K.elementwise_add, out_idx=(2,))
    for n in (300, 5):
        rng = _rng("add-out", n)
        A, B = _rand(rng, (n,), "float32"), _rand(rng, (n,), "float32")
        C = kernel(A, B)
        assert isinstance(C, np.ndarray) and C.shape == (n,) and C.dtype == np.float32
        np.testing.assert_allclose(_f64(C), _f64(A) + _f64(B), rtol=1e-6, atol=0)
    # A negative index names the same parameter.
    kernel_neg = _compile(K.elementwise_add, out_idx=(-1,))
    assert kernel_neg.out_idx == [2]
    A, B = _rand(_rng("neg"), (40,), "float32"), _rand(_rng("neg2"), (40,), "float32")
    np.testing.assert_allclose(_f64(kernel_neg(A, B)), _f64(A) + _f64(B), rtol=1e-6, atol=0)


def test_scalar_parameters():
    kernel = _compile(K.axpb)
    rng = _rng("scalar")
    A = _rand(rng, (300,), "float32")
    for alpha, beta in ((2.5, 3), (-0.125, -40), (np.float32(1.5), np.int32(7))):
        B = np.full((300,), np.nan, dtype=np.float32)
        kernel(A, B, alpha, beta)
        np.testing.assert_allclose(_f64(B), float(alpha) * _f64(A) + int(beta), rtol=1e-6, atol=1e-6,
                                   err_msg=f"alpha={alpha} beta={beta}")


def test_scalar_parameter_with_out_idx():
    kernel = _compile(K.axpb, out_idx=(1,))
    A = _rand(_rng("scalar-out"), (129,), "float32")
    B = kernel(A, 0.5, 2)
    np.testing.assert_allclose(_f64(B), 0.5 * _f64(A) + 2, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------------
# Row softmax, RMSNorm
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("M,N,block_M", [(100, 128, 8), (37, 40, 16)])
def test_softmax(M, N, block_M):
    kernel = _compile(K.softmax, M, N, block_M)
    X = _rand(_rng("softmax", M, N), (M, N), "float32", scale=3.0)
    Y = np.full((M, N), np.nan, dtype=np.float32)
    kernel(X, Y)
    x = _f64(X)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(_f64(Y), ref, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("M,N,blk_m,dtype", [(100, 96, 8, "float32"), (67, 64, 4, "float16")])
def test_rms_norm(M, N, blk_m, dtype):
    kernel = _compile(K.rms_norm, M, N, blk_m, dtype=dtype)
    A = _rand(_rng("rms", M, N, dtype), (M, N), dtype, scale=2.0)
    B = np.full((M, N), np.nan, dtype=NP_DTYPES[dtype])
    kernel(A, B)
    a = _f64(A)
    ref = a / np.sqrt(np.mean(a * a, axis=1, keepdims=True) + 1e-12)
    _assert_close(B, ref, dtype, what=f"rms_norm {dtype}")


# ---------------------------------------------------------------------------------------------------
# Reductions along each dimension of a 2-D tile (one kernel, ten outputs through out_idx)
# ---------------------------------------------------------------------------------------------------
RED_OPS = ["sum", "max", "min", "abssum", "absmax"]
RED_G, RED_BM, RED_N = 5, 16, 48  # 5 blocks of a (16, 48) tile


def _reduce_kernel(G, bm, N, dtype="float32"):
    M = G * bm

    @T.prim_func
    def reduce_all(
        A: T.Tensor((M, N), dtype),
        R1_sum: T.Tensor((M,), dtype), R1_max: T.Tensor((M,), dtype), R1_min: T.Tensor((M,), dtype),
        R1_abssum: T.Tensor((M,), dtype), R1_absmax: T.Tensor((M,), dtype),
        R0_sum: T.Tensor((G, N), dtype), R0_max: T.Tensor((G, N), dtype), R0_min: T.Tensor((G, N), dtype),
        R0_abssum: T.Tensor((G, N), dtype), R0_absmax: T.Tensor((G, N), dtype),
    ):
        with T.Kernel(G, threads=128) as bx:
            tile = T.alloc_fragment((bm, N), dtype)
            rows = T.alloc_fragment((bm,), dtype)
            cols = T.alloc_fragment((N,), dtype)
            T.copy(A[bx * bm:(bx + 1) * bm, :], tile)

            T.reduce_sum(tile, rows, dim=1)
            T.copy(rows, R1_sum[bx * bm:(bx + 1) * bm])
            T.reduce_max(tile, rows, dim=1)
            T.copy(rows, R1_max[bx * bm:(bx + 1) * bm])
            T.reduce_min(tile, rows, dim=1)
            T.copy(rows, R1_min[bx * bm:(bx + 1) * bm])
            T.reduce_abssum(tile, rows, dim=1)
            T.copy(rows, R1_abssum[bx * bm:(bx + 1) * bm])
            T.reduce_absmax(tile, rows, dim=1)
            T.copy(rows, R1_absmax[bx * bm:(bx + 1) * bm])

            T.reduce_sum(tile, cols, dim=0)
            T.copy(cols, R0_sum[bx, :])
            T.reduce_max(tile, cols, dim=0)
            T.copy(cols, R0_max[bx, :])
            T.reduce_min(tile, cols, dim=0)
            T.copy(cols, R0_min[bx, :])
            T.reduce_abssum(tile, cols, dim=0)
            T.copy(cols, R0_abssum[bx, :])
            T.reduce_absmax(tile, cols, dim=0)
            T.copy(cols, R0_absmax[bx, :])

    return reduce_all


@pytest.fixture(scope="module")
def reduction_results():
    # All ten outputs are allocated by the kernel (out_idx with several entries).
    kernel = _compile(_reduce_kernel, RED_G, RED_BM, RED_N, out_idx=tuple(range(1, 11)))
    A = _rand(_rng("reduce"), (RED_G * RED_BM, RED_N), "float32")
    outs = kernel(A)
    assert isinstance(outs, (list, tuple)) and len(outs) == 10
    names = [f"R1_{op}" for op in RED_OPS] + [f"R0_{op}" for op in RED_OPS]
    return A, dict(zip(names, outs))


def _np_reduce(x, op, axis):
    return {"sum": np.sum, "max": np.max, "min": np.min,
            "abssum": lambda v, axis: np.sum(np.abs(v), axis=axis),
            "absmax": lambda v, axis: np.max(np.abs(v), axis=axis)}[op](x, axis=axis)


@pytest.mark.parametrize("op", RED_OPS)
@pytest.mark.parametrize("dim", [0, 1])
def test_reduce(reduction_results, op, dim):
    A, outs = reduction_results
    got = outs[f"R{dim}_{op}"]
    a = _f64(A)
    if dim == 1:
        ref = _np_reduce(a, op, axis=1)
        assert got.shape == (RED_G * RED_BM,) and got.dtype == np.float32
    else:
        ref = _np_reduce(a.reshape(RED_G, RED_BM, RED_N), op, axis=1)
        assert got.shape == (RED_G, RED_N) and got.dtype == np.float32
    np.testing.assert_allclose(_f64(got), ref, rtol=1e-5, atol=1e-5, err_msg=f"reduce_{op} dim={dim}")


# ---------------------------------------------------------------------------------------------------
# Cumsum (block-wise, forward and reverse, along each dimension)
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim,reverse,scope", [
    (0, False, "shared"), (0, True, "fragment"), (1, False, "fragment"), (1, True, "shared")])
def test_cumsum(dim, reverse, scope):
    M, N, bm, bn = 100, 72, 32, 32  # ragged in both dimensions
    kernel = _compile(K.cumsum, M, N, bm, bn, dim=dim, reverse=reverse, scope=scope)
    A = _rand(_rng("cumsum", dim, reverse), (M, N), "float32")
    B = np.full((M, N), np.nan, dtype=np.float32)
    kernel(A, B)
    # Reference: scan each (bm, bn) tile independently; cells past the edge count as zero.
    gm, gn = -(-M // bm), -(-N // bn)
    pad = np.zeros((gm * bm, gn * bn))
    pad[:M, :N] = _f64(A)
    tiles = pad.reshape(gm, bm, gn, bn)
    axis = 1 if dim == 0 else 3
    if reverse:
        scanned = np.flip(np.cumsum(np.flip(tiles, axis=axis), axis=axis), axis=axis)
    else:
        scanned = np.cumsum(tiles, axis=axis)
    ref = scanned.reshape(gm * bm, gn * bn)[:M, :N]
    np.testing.assert_allclose(_f64(B), ref, rtol=1e-5, atol=1e-5, err_msg=f"cumsum dim={dim} reverse={reverse}")


# ---------------------------------------------------------------------------------------------------
# FlashAttention forward
# ---------------------------------------------------------------------------------------------------
def _attention_reference(Q, Kt, V, causal):
    q, k, v = _f64(Q), _f64(Kt), _f64(V)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        L = s.shape[-1]
        s = np.where(np.tril(np.ones((L, L), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v


@pytest.mark.parametrize("causal", [False, True], ids=["noncausal", "causal"])
def test_flash_attention(causal):
    batch, heads, seq_len, dim = 2, 2, 128, 64
    kernel = _compile(K.flashattn, batch, heads, seq_len, dim, causal)
    rng = _rng("fa", causal)
    shape = (batch, heads, seq_len, dim)
    Q, Kt, V = (_rand(rng, shape, "float16") for _ in range(3))
    O = np.full(shape, np.nan, dtype=np.float16)
    kernel(Q, Kt, V, O)
    ref = _attention_reference(Q, Kt, V, causal)
    # fp16 output, and the probabilities are rounded to fp16 before the second GEMM.
    np.testing.assert_allclose(_f64(O), ref, rtol=5e-3, atol=2e-3, err_msg=f"flashattn causal={causal}")
    if causal:  # the first query only sees the first key
        np.testing.assert_allclose(_f64(O[:, :, 0, :]), _f64(V[:, :, 0, :]), rtol=1e-3, atol=1e-3)
