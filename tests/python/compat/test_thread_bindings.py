"""Thread indices and user barriers as TileLang writes them: T.get_thread_binding, T.thread_binding loops,
T.sync_threads. Statements outside T.Parallel that read the thread index run once per thread (GPU: as
written; CPU: in a loop over the block's threads, split at each T.sync_threads). Run on the CPU target,
the CUDA emulator (race checks on) and OpenCL on PoCL against NumPy at ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 1203
WHERE = ["cpu", "emulator", "opencl"]


def _compile(f, where, **kw):
    if where == "emulator":
        return tilelang.compile(f, target="cuda", execution_backend="emulator", **kw)
    return tilelang.compile(f, target=where, **kw)


def tree_row_sum(M, N):
    """A shared-memory tree reduction per row, one thread per element, barriers by hand."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=64) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((64,), "float32")
            if tx < N:
                S[tx] = A[bx, tx]
            else:
                S[tx] = 0.0
            T.sync_threads()
            for s in [32, 16, 8, 4, 2, 1]:  # parse-time loop
                if tx < s:
                    S[tx] = S[tx] + S[tx + s]
                T.sync_threads()
            if tx == 0:
                B[bx] = S[0]

    return k


@pytest.mark.parametrize("where", WHERE)
def test_tree_reduction_with_sync_threads(where):
    M, N = 7, 50  # N ragged against the 64 threads
    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal((M, N)).astype("float32")
    b = np.zeros(M, "float32")
    _compile(tree_row_sum(M, N), where)(a, b)
    np.testing.assert_allclose(b, a.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("where", WHERE)
def test_thread_binding_loop_and_two_thread_dims(where):
    N = 200

    with pytest.raises(TileLangTypeError, match=r"T.thread_binding over 48 threadIdx.x threads, but the kernel has "
                                                r"threads=\(16, 4\)"):
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, 48), threads=(16, 4)) as bx:
                for t in T.thread_binding(0, 48, thread="threadIdx.x"):  # threadIdx.x has only 16 threads
                    A[0] = A[0]

    @T.prim_func
    def k2(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((4, 16), "int32")):
        with T.Kernel(T.ceildiv(N, 48), threads=64) as bx:
            for t in T.thread_binding(0, 48, thread="threadIdx.x"):  # the first 48 of 64 threads
                if bx * 48 + t < N:
                    B[bx * 48 + t] = A[bx * 48 + t] * 2.0 + 1.0

    @T.prim_func
    def k3(C: T.Tensor((4, 16), "int32")):
        with T.Kernel(1, threads=(16, 4)) as bx:
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            C[ty, tx] = ty * 100 + tx

    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal(N).astype("float32")
    b = np.zeros(N, "float32")
    _compile(k2, where)(a, b, np.zeros((4, 16), "int32"))
    np.testing.assert_allclose(b, a.astype(np.float64) * 2 + 1, rtol=1e-6)
    c = np.full((4, 16), -1, "int32")
    _compile(k3, where)(c)
    np.testing.assert_array_equal(c, np.arange(4)[:, None] * 100 + np.arange(16)[None, :])


def test_cuda_source_uses_thread_idx_and_the_user_barriers():
    k = tilelang.compile(tree_row_sum(4, 64), target="cuda -arch=sm_80")
    src = k.get_kernel_source()
    assert "threadIdx.x" in src and src.count("__syncthreads()") >= 7, src
    assert ".entry" in k.get_ptx()


def test_without_the_user_barriers_the_emulator_reports_a_race():
    M, N = 2, 64

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=64) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((64,), "float32")
            S[tx] = A[bx, tx]
            for s in [32, 16, 8, 4, 2, 1]:
                if tx < s:
                    S[tx] = S[tx] + S[tx + s]
            if tx == 0:
                B[bx] = S[0]

    kern = tilelang.compile(k, target="cuda", execution_backend="emulator",
                            pass_configs={"tl.disable_barrier_insertion": True})
    with pytest.raises(tilelang.errors.TileLangEmulationError, match="race"):
        kern(np.ones((M, N), "float32"), np.zeros(M, "float32"))


def _error(body_fn, match, target="cpu"):
    with pytest.raises(TileLangUnsupportedError, match=match) as info:
        tilelang.compile(body_fn(), target=target)
    assert "test_thread_bindings.py:" in str(info.value)


def test_errors():
    def in_parallel():
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                tx = T.get_thread_binding()
                for i in T.Parallel(64):
                    A[i] = A[i] + tx

        return k

    for target in ("cpu", "cuda"):
        _error(in_parallel, r"thread index .* inside T.Parallel", target)

    def divergent_barrier():
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                tx = T.get_thread_binding()
                if tx < 32:
                    A[tx] = 1.0
                    T.sync_threads()

        return k

    for target in ("cpu", "cuda"):
        _error(divergent_barrier, r"T.sync_threads under a condition on the thread index", target)

    def tile_op_on_thread_slice():
        @T.prim_func
        def k(A: T.Tensor((64, 4), "float32"), B: T.Tensor((64, 4), "float32")):
            with T.Kernel(1, threads=64) as bx:
                tx = T.get_thread_binding()
                T.copy(A[tx, 0:4], B[tx, 0:4])

        return k

    _error(tile_op_on_thread_slice, r"T.copy with an operand that depends on the thread index")


@pytest.mark.parametrize("where", WHERE)
def test_per_thread_locals_live_across_a_barrier(where):
    """Each thread keeps its own T.alloc_var / T.alloc_local values across T.sync_threads, and a T.clear
    of a local clears every thread's copy. Before, the CPU target refused this ("one copy of it"); now it
    gives each thread a copy (LowerThreadBindingsCPU), as each GPU thread has its own registers."""
    N = 96

    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((32,), "float32")
            v = T.alloc_var("float32", init=0.5)
            acc = T.alloc_local((2,), "float32")
            T.clear(acc)
            for j in T.serial(3):
                acc[j % 2] += A[bx * 32 + tx] * (j + 1)
            v = v + acc[0]
            S[tx] = v
            T.sync_threads()
            B[bx * 32 + tx] = v + acc[1] + S[31 - tx]
            T.sync_threads()
            S[tx] = acc[1]
            T.sync_threads()
            C[bx * 32 + tx] = S[(tx + 3) % 32] - v

    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = rng.standard_normal(N).astype(np.float32)
    b, c = np.zeros(N, np.float32), np.zeros(N, np.float32)
    _compile(k, where)(a, b, c)
    a64 = a.astype(np.float64).reshape(-1, 32)
    v = 0.5 + a64 * 4  # acc[0] = a * (1 + 3), acc[1] = a * 2
    acc1 = a64 * 2
    np.testing.assert_allclose(b.reshape(-1, 32), v + acc1 + v[:, ::-1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c.reshape(-1, 32), np.roll(acc1, -3, axis=1) - v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("where", WHERE)
def test_barriers_the_gpu_inserts_split_cpu_phases(where):
    """Per-thread code without T.sync_threads: on a GPU the compiler puts a barrier between a shared write
    and another thread's read of it (InsertBarriers); the CPU target starts a new loop over the threads
    there. Before, the CPU ran both statements in one loop and read elements not yet written (B all 0)."""
    @T.prim_func
    def rotate(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), C: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((128,), "float32")
            R = T.alloc_shared((128,), "float32")
            tx = T.get_thread_binding()
            S[tx] = A[tx]
            B[tx] = S[(tx + 1) % 128]
            for k in T.serial(3):  # every iteration reads neighbours the previous phase wrote
                R[tx] = S[(tx + 5) % 128]
                S[tx] = R[tx] * 2.0
            C[tx] = S[tx]

    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = rng.standard_normal(128).astype(np.float32)
    b, c = np.zeros_like(a), np.zeros_like(a)
    _compile(rotate, where)(a, b, c)
    np.testing.assert_array_equal(b, np.roll(a, -1))
    np.testing.assert_array_equal(c, np.roll(a, -15) * 8)


def test_block_statements_beside_per_thread_ones_run_once_on_cpu():
    """A tile op between per-thread statements is run by the whole block once, not once per thread (an
    accumulating T.atomic_add inside the threads' loop added 64 times)."""
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float32")
            tx = T.get_thread_binding()
            S[tx] = A[tx] * 3.0
            T.atomic_add(B, S)
            B[tx] = B[tx] + 1.0

    a = np.arange(64, dtype=np.float32)
    for where in ("cpu", "emulator"):
        b = np.ones(64, np.float32)
        _compile(k, where)(a, b)
        np.testing.assert_array_equal(b, 1 + 3 * a + 1, err_msg=where)


@pytest.mark.parametrize("where", WHERE)
def test_scalar_stores_under_a_condition_on_the_thread_index(where):
    """`if tx == 5: Out[b] = 7` outside T.Parallel: the store is thread 5's. Before, the GPU lowerings made
    every scalar store whose own index and value do not read the thread index a store of thread 0, so under
    `tx == 5` nothing was written (silently; the CPU target was right). Plain stores, atomics and atomic
    stores, under an `if` and under a `while` on the thread index."""
    @T.prim_func
    def k(Out: T.Tensor((4, 3), "int32"), Count: T.Tensor((4,), "int32")):
        with T.Kernel(4, threads=32) as b:
            tx = T.get_thread_binding()
            if tx == 5:
                Out[b, 0] = 7
                T.atomic_store(Out[b, 1], 8, memory_order="relaxed")
            if tx >= 8:
                T.atomic_add(Count[b], 1)
            i = T.alloc_var("int32", init=0)
            while i < tx - 30:  # only thread 31 iterates
                Out[b, 2] = 9
                i = i + 1

    out, count = np.zeros((4, 3), np.int32), np.zeros(4, np.int32)
    _compile(k, where)(out, count)
    np.testing.assert_array_equal(out, np.tile([7, 8, 9], (4, 1)))
    np.testing.assert_array_equal(count, np.full(4, 24))


@pytest.mark.parametrize("where", WHERE)
def test_stores_through_a_register_holding_the_thread_index_are_each_threads(where):
    """`v = T.alloc_var(...)`, `v = tx`, then `A[v] = ...` (and a register fed by it): each thread stores at its
    own v. Before, the GPU lowerings saw a store that does not read the thread index and made thread 0 do it,
    so one element of 64 was written (silently; the CPU target was right)."""
    @T.prim_func
    def k(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=64):
            v = T.alloc_var("int32")
            w = T.alloc_var("int32")
            tx = T.get_thread_binding()
            v = tx
            w = 63 - v
            A[v] = v * 2
            B[w] = 1

    a, b = np.zeros(64, np.int32), np.zeros(64, np.int32)
    _compile(k, where)(a, b)
    np.testing.assert_array_equal(a, np.arange(64) * 2)
    np.testing.assert_array_equal(b, np.ones(64))
