"""T.tvm_warp_shuffle (TileLang's Hadamard transform exchanges values between lanes with it) and T.parallel
(TVM's one-axis parallel loop, nested as TileLang's pooling example does). The shuffle reads another lane of
the thread's group of `width` lanes: in the emulator for CUDA (32-lane warps), HIP (64-lane waves) and Metal
against NumPy, the sources built for real (NVRTC: shfl.sync.idx in the PTX; hipcc; clang for MSL); on the CPU
target through a shared staging buffer between two phases of the block's thread loop; OpenCL refuses it at
the line. Before: AttributeError (no such names); then the CPU target refused it too."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 20261207


def butterfly(n, width, dtype="float32"):
    """B[t] = A[t] + A[t ^ 1] (lane t ^ 1 of its group), then C[t] = the value of lane (t + 3) % width."""

    @T.prim_func
    def k(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding(0)
            B[tx] = A[tx] + T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], (tx ^ 1) % width, width, max(32, width))
            C[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], (tx % width + 3) % width, width, max(32, width))

    return k


def _reference(a, width):
    t = np.arange(len(a))
    grp = t & ~(width - 1)
    b = a + a[grp | ((t ^ 1) % width)]
    c = a[grp | ((t % width + 3) % width)]
    return b, c


@pytest.mark.parametrize("target", ["cuda", "hip", "metal"])
@pytest.mark.parametrize("width", [8, 32])
def test_shuffle_matches_numpy_in_the_emulator(target, width):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal(128).astype(np.float32)
    b, c = np.zeros_like(a), np.zeros_like(a)
    tilelang.compile(butterfly(128, width), target=target, execution_backend="emulator")(a, b, c)
    rb, rc = _reference(a, width)
    np.testing.assert_array_equal(b, rb)
    np.testing.assert_array_equal(c, rc)


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "hip", "metal"])
def test_generated_sources_compile(target):
    k = tilelang.compile(butterfly(64, 16, "int32"), target=target)
    if target.startswith("cuda"):
        assert "shfl.sync.idx" in k.get_ptx()


def test_opencl_refuses_it_at_the_line():
    with pytest.raises(TileLangUnsupportedError, match="warp shuffle") as e:
        tilelang.compile(butterfly(64, 32), target="opencl")
    assert "test_warp_shuffle.py" in str(e.value)


@pytest.mark.parametrize("width", [4, 8, 32])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_cpu_target_stages_shuffles_through_shared_memory(width, dtype):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = (r.standard_normal(96) * 100).astype(dtype)
    b, c = np.zeros_like(a), np.zeros_like(a)
    k = tilelang.compile(butterfly(96, width, dtype), target="cpu")
    k(a, b, c)
    rb, rc = _reference(a, width)
    np.testing.assert_array_equal(b, rb)
    np.testing.assert_array_equal(c, rc)
    assert "shfl_stage" in k.get_kernel_source()


def rounds(n, width, steps):
    """Shuffles in a loop, each round reading the previous round's values (TileLang's Hadamard butterfly)."""

    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), B: T.Tensor((2, n), "float32")):
        with T.Kernel(2, threads=n) as bx:
            tx = T.get_thread_binding(0)
            v = T.alloc_local((1,), "float32")
            other = T.alloc_local((1,), "float32")
            v[0] = A[tx] + bx
            for i in T.serial(steps):
                other[0] = T.tvm_warp_shuffle(0xFFFFFFFF, v[0], tx ^ (1 << i), width, max(32, width))
                v[0] = T.if_then_else((tx >> i) & 1 == 0, v[0] + other[0], other[0] - v[0])
            B[bx, tx] = v[0] * (bx + 1)  # (each block its own row: the CPU target runs blocks in parallel)

    return k


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator")])
def test_a_butterfly_over_rounds_matches_numpy(target, backend):
    a = np.random.default_rng(SEED).standard_normal(64).astype(np.float32)
    b = np.zeros((2, 64), np.float32)
    tilelang.compile(rounds(64, 8, 3), target=target, execution_backend=backend)(a, b)
    t = np.arange(64)
    for bx in range(2):
        v = a.astype(np.float64) + bx
        for i in range(3):
            other = v[t ^ (1 << i)]
            v = np.where((t >> i) & 1 == 0, v + other, other - v)
        np.testing.assert_allclose(b[bx], v * (bx + 1), rtol=1e-5, atol=1e-5)


def test_cpu_refuses_a_shuffle_only_some_threads_reach():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding(0)
            if tx < 40:
                B[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], 0, 32, 32)

    with pytest.raises(TileLangUnsupportedError, match="under a condition on the thread index") as e:
        tilelang.compile(k, target="cpu")
    assert "test_warp_shuffle.py" in str(e.value)


def test_bad_widths_are_type_errors():
    with pytest.raises(TileLangTypeError, match="power of two"):
        butterfly(64, 12)
    with pytest.raises(TileLangUnsupportedError, match="wider than the 32-lane warp"):
        tilelang.compile(butterfly(128, 64), target="cuda", execution_backend="emulator")


def lower_rows(M, N):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), n: T.int32, B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_fragment((M, N), "float32")
            T.copy(A, S)
            for i in T.parallel(M):
                for j in T.parallel(0, N):
                    if i >= n:
                        S[i, j] = 0.0
            T.copy(S, B)

    return k


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator"), ("opencl", None)])
def test_lowercase_parallel_loops_nest(target, backend):
    r = np.random.default_rng(SEED)
    a = r.standard_normal((32, 24)).astype(np.float32)
    b = np.zeros_like(a)
    tilelang.compile(lower_rows(32, 24), target=target, execution_backend=backend)(a, 10, b)
    ref = a.copy()
    ref[10:] = 0
    np.testing.assert_array_equal(b, ref)
    with pytest.raises(TileLangUnsupportedError, match="start other than 0"):
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=8):
                for i in T.parallel(2, 8):
                    A[i] = 0.0


def small_block(n, width, warp_size, offset):
    """A block of fewer threads than a warp (TileLang's Hadamard transform for short rows: 8 threads, warp_size
    8): C[t] = the value of lane (t + offset) % width of t's group."""

    @T.prim_func
    def k(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding(0)
            C[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], (tx + offset) % width, width, warp_size)

    return k


@pytest.mark.parametrize("n,width,warp_size", [(8, 8, 8), (8, 4, 8), (40, 8, 32)])
def test_blocks_smaller_than_a_warp_shuffle_among_their_lanes(n, width, warp_size):
    """Before: the emulator skipped the shuffle (inactive_lanes: 8 of the 32 lanes) and the front end refused a
    warp_size of 8. Lanes past the block's last thread do not exist (they count as exited for shfl.sync)."""
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal(n).astype(np.float32)
    c = np.zeros_like(a)
    tilelang.compile(small_block(n, width, warp_size, 3), target="cuda", execution_backend="emulator")(a, c)
    t = np.arange(n)
    np.testing.assert_array_equal(c, a[(t & ~(width - 1)) | ((t + 3) % width)])


def test_reading_a_lane_the_block_does_not_have_is_reported():
    """A block of 8 threads shuffling over 16 lanes reads lanes 8..15, which do not exist."""
    from tilelang.errors import TileLangEmulationError

    a = np.arange(8, dtype=np.float32)
    c = np.zeros_like(a)
    with pytest.raises(TileLangEmulationError, match="which a block of 8 threads does not have"):
        tilelang.compile(small_block(8, 16, 32, 8), target="cuda", execution_backend="emulator")(a, c)
