"""TVM's cross-thread reduction as TileLang's GEMV examples write it: T.comm_reducer in a "reduce_scope"
T.attr around T.tvm_thread_allreduce. Lowered in the front end to a shared-memory exchange, so every backend
runs it; each thread of a group gets the group's result. Run on the CPU target, the CUDA emulator (race and
uninitialised-read checks on) and OpenCL on PoCL against NumPy in float64, at ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError, TileLangUnsupportedError

SEED = 4242
WHERE = ["cpu", "emulator", "opencl"]


def _compile(f, where):
    if where == "emulator":
        return tilelang.compile(f, target="cuda", execution_backend="emulator")
    return tilelang.compile(f, target=where)


def splitk_gemv(N, K, BLOCK_N, R, TILE_K=4):
    """C[n] = sum_k B[n, k] * A[k]: threads (BLOCK_N, R); the R threads of a row reduce with allreduce."""
    BLOCK_K = R * TILE_K

    @T.prim_func
    def k(A: T.Tensor((K,), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, R)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            acc = T.alloc_local((1,), "float32")
            red = T.alloc_local((1,), "float32")
            T.clear(acc)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for j in T.serial(TILE_K):
                    kk = bk * BLOCK_K + tk * TILE_K + j
                    if kk < K:
                        acc[0] += A[kk].astype("float32") * B[bn * BLOCK_N + tn, kk].astype("float32")
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tk, dtype="handle"))
            if tk == 0:
                C[bn * BLOCK_N + tn] = red[0]

    return k


@pytest.mark.parametrize("where", WHERE)
def test_splitk_gemv_sum_allreduce(where):
    N, K = 37, 300  # ragged against BLOCK_N = 4 and R * TILE_K = 32
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = rng.standard_normal(K).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros(N, np.float32)
    _compile(splitk_gemv(N, K, 4, 8), where)(a, b, c)
    np.testing.assert_allclose(c, b.astype(np.float64) @ a.astype(np.float64), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("where", WHERE)
def test_max_over_two_axes_with_a_condition_every_thread_gets_it(where):
    """A max over threads (x, z) of each y, where the condition drops odd x: every thread of a group holds
    the group's maximum (written per thread, so a thread that missed it would show)."""
    X, Y, Z = 4, 3, 2

    @T.prim_func
    def k(A: T.Tensor((Z, Y, X), "float32"), B: T.Tensor((Z, Y, X), "float32")):
        with T.Kernel(1, threads=(X, Y, Z)) as bx:
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            tz = T.get_thread_binding(2)
            out = T.alloc_local((1,), "float32")
            with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.cast(-3.0e38, "float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tz, ty, tx], tx % 2 == 0, out[0], tz, tx,
                                                  dtype="handle"))
            B[tz, ty, tx] = out[0]

    rng = np.random.default_rng(SEED + 1)
    print(f"seed {SEED + 1}")
    a = rng.standard_normal((Z, Y, X)).astype(np.float32)
    b = np.zeros_like(a)
    _compile(k, where)(a, b)
    want = a[:, :, 0::2].max(axis=(0, 2))  # per y, over z and the even x
    np.testing.assert_array_equal(b, np.broadcast_to(want[None, :, None], a.shape))


def test_gpu_lowering_exchanges_through_shared_memory():
    src = tilelang.compile(splitk_gemv(64, 256, 4, 8), target="cuda -arch=sm_80").get_kernel_source()
    assert "__shared__" in src or "extern __shared__" in src, src
    assert "__syncthreads()" in src, src


def test_errors():
    with pytest.raises(TileLangSyntaxError, match="goes inside `with T.attr"):
        @T.prim_func
        def k(A: T.Tensor((32,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                tx = T.get_thread_binding()
                r = T.alloc_local((1,), "float32")
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, r[0], tx, dtype="handle"))

    with pytest.raises(TileLangUnsupportedError, match="over 2 values at once"):
        T.comm_reducer(lambda x0, x1, y0, y1: (x0 + y0, x1 + y1), [0.0, 0.0])

    with pytest.raises(tilelang.errors.TileLangTypeError, match="reduces over thread axes"):
        @T.prim_func
        def k2(A: T.Tensor((32,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                tx = T.get_thread_binding()
                r = T.alloc_local((1,), "float32")
                with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope",
                            T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, r[0], bx, dtype="handle"))
