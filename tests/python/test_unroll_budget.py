"""Per-thread code stays a size the backend compilers handle (the reliability issue's compile blow-up):
T.cumsum along the last axis of a fragment with at least a line per thread deals a line to each thread
instead of keeping the whole tile in every thread, and a loop over a
thread's elements is fully unrolled only while the code it expands to stays within a budget ("#pragma
unroll 4" past it). Numbers against NumPy in the emulator (CUDA, HIP, Metal lowerings) and on OpenCL."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T


SEED = 77


def scan(M, N, dim, reverse=False, threads=128):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            F = T.alloc_fragment((M, N), "float32")
            T.copy(A, F)
            T.cumsum(F, dim=dim, reverse=reverse)
            T.copy(F, B)

    return k


def _want(a, dim, reverse):
    x = a.astype(np.float64)
    if reverse:
        return np.flip(np.cumsum(np.flip(x, dim), dim), dim)
    return np.cumsum(x, dim)


def _run(k, a):
    b = np.zeros_like(a)
    k(a, b)
    return b


@pytest.mark.parametrize("reverse", [False, True])
def test_fragment_scan_along_the_last_axis_is_a_line_per_thread(reverse):
    a = np.random.default_rng(SEED).standard_normal((32, 64)).astype(np.float32)
    # 32 lines over 32 threads: a line each
    src = tilelang.compile(scan(32, 64, 1, reverse, threads=32), target="cuda -arch=sm_80").get_kernel_source()
    sizes = [int(x) for x in re.findall(r"float F\[(\d+)\]", src)]
    assert sizes and max(sizes) <= 64, f"each thread holds one 64-element line, not the whole tile: {sizes}"
    for target in ("cuda", "hip", "metal"):
        k = tilelang.compile(scan(32, 64, 1, reverse, threads=32), target=target, execution_backend="emulator")
        np.testing.assert_allclose(_run(k, a), _want(a, 1, reverse), rtol=1e-5, atol=1e-4, err_msg=target)
    k = tilelang.compile(scan(32, 64, 1, reverse, threads=32), target="opencl")
    np.testing.assert_allclose(_run(k, a), _want(a, 1, reverse), rtol=1e-5, atol=1e-4)
    # Fewer lines than threads (32 lines, 128 threads). Before: every thread held the whole tile
    # (`float F[2048]`, 8 KiB of stack each). Expected: threads 0-31 own a line each and the other 96
    # hold replicas of them (thread t the line of t % 32), so 64 registers each; only the owners store.
    src = tilelang.compile(scan(32, 64, 1, reverse), target="cuda -arch=sm_80").get_kernel_source()
    sizes = [int(x) for x in re.findall(r"float F\[(\d+)\]", src)]
    assert sizes and max(sizes) <= 64, sizes
    assert "(tx >> 5) == 0" in src, "only one replica of each line writes it back"
    for target in ("cuda", "hip", "metal"):
        k = tilelang.compile(scan(32, 64, 1, reverse), target=target, execution_backend="emulator")
        np.testing.assert_allclose(_run(k, a), _want(a, 1, reverse), rtol=1e-5, atol=1e-4, err_msg=target)
    k = tilelang.compile(scan(32, 64, 1, reverse), target="opencl")
    np.testing.assert_allclose(_run(k, a), _want(a, 1, reverse), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("M,N,threads", [(200, 16, 128), (5, 48, 64), (1, 64, 32), (3, 40, 96), (7, 16, 128),
                                         (2, 8, 48)])
def test_more_or_fewer_lines_than_threads(M, N, threads):
    """Lines dealt to owners that divide the block (5 lines over 64 threads: 4 owners, two lines for the
    first), with and without a partial round, on every lowering."""
    a = np.random.default_rng(SEED + M).standard_normal((M, N)).astype(np.float32)
    print(f"seed {SEED + M}")
    for target in ("cuda", "hip", "metal"):
        k = tilelang.compile(scan(M, N, 1, threads=threads), target=target, execution_backend="emulator")
        np.testing.assert_allclose(_run(k, a), _want(a, 1, False), rtol=1e-5, atol=1e-4, err_msg=target)
    k = tilelang.compile(scan(M, N, 1, threads=threads), target="opencl")
    np.testing.assert_allclose(_run(k, a), _want(a, 1, False), rtol=1e-5, atol=1e-4)


def test_big_replicated_loops_are_not_fully_unrolled():
    """A scan along the first axis keeps the whole (32, 64) tile in every thread; its loops over 2048
    elements get "#pragma unroll 4", small loops stay fully unrolled."""
    a = np.random.default_rng(SEED + 1).standard_normal((32, 64)).astype(np.float32)
    src = tilelang.compile(scan(32, 64, 0), target="cuda -arch=sm_80").get_kernel_source()
    assert "float F[2048]" in src
    pragmas = re.findall(r"#pragma unroll( \d+)?\n\s*for \(int32_t \w+ = 0; \w+ < 0 \+ (\d+);", src)
    assert pragmas, src
    for factor, trip in pragmas:
        assert (factor.strip() == "4") == (int(trip) >= 2048), (factor, trip)
    k = tilelang.compile(scan(32, 64, 0), target="cuda", execution_backend="emulator")
    np.testing.assert_allclose(_run(k, a), _want(a, 0, False), rtol=1e-5, atol=1e-4)


def two_reductions(M, N, threads):
    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32"), C: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=threads):
            F = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            s = T.alloc_fragment((M,), "float32")
            T.copy(A, F)
            T.reduce_max(F, m, dim=1)
            T.reduce_sum(F, s, dim=1)
            T.copy(m, B)
            T.copy(s, C)

    return k


def _selects(src):
    """Conditional updates of a reduction's partials: `red_0[e] = ((slot == e) ? op : red_0[e])`."""
    return len(re.findall(r"red_\d+\[\w+\] = \(\(.*\) \? ", src))


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "opencl", "metal", "hip"])
def test_one_thread_reductions_update_each_slot_directly(target):
    """Before: one thread holding a (16, 48) tile updated each of its 768 elements through a select
    over all 16 destination slots (a 16-way unrolled loop per element, 6210 lines, 55 s of NVRTC and
    over 10 minutes of PoCL), because the slot was computed from tx without tx's range. Expected:
    with 0 <= tx < 1 every slot is a constant, so each element is one direct update."""
    src = tilelang.compile(two_reductions(16, 48, 1), target=target).get_kernel_source()
    assert _selects(src) == 0, src[:4000]
    assert len(src.splitlines()) < 2 * 768 + 400
    a = np.random.default_rng(SEED + 5).standard_normal((16, 48)).astype(np.float32)
    print(f"seed {SEED + 5}")
    k = (tilelang.compile(two_reductions(16, 48, 1), target=target) if target == "opencl" else
         tilelang.compile(two_reductions(16, 48, 1), target=target.split()[0], execution_backend="emulator"))
    b, c = np.zeros(16, np.float32), np.zeros(16, np.float32)
    k(a, b, c)
    np.testing.assert_array_equal(b, a.max(axis=1))
    np.testing.assert_allclose(c, a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,N,threads", [(16, 48, 3), (16, 48, 48), (16, 48, 32), (8, 64, 128), (5, 40, 64)])
def test_reductions_where_threads_share_rows_only_select_among_reachable_slots(M, N, threads):
    """With more threads a slot still depends on tx; the select only ranges over the slots tx can reach
    (before: over all M), and the numbers are right on every lowering. A block that is not whole warps
    (3 or 48 threads) exchanges its partials through shared memory: before, its warp butterfly named
    lanes that do not exist (the emulator reported inactive lanes; undefined on a GPU)."""
    if threads % 32:
        src = tilelang.compile(two_reductions(M, N, threads), target="cuda -arch=sm_80").get_kernel_source()
        assert "shfl" not in src and "red_smem" in src
    a = np.random.default_rng(SEED + M * threads).standard_normal((M, N)).astype(np.float32)
    print(f"seed {SEED + M * threads}")
    for target in ("cuda", "hip", "metal"):
        k = tilelang.compile(two_reductions(M, N, threads), target=target, execution_backend="emulator")
        b, c = np.zeros(M, np.float32), np.zeros(M, np.float32)
        k(a, b, c)
        np.testing.assert_array_equal(b, a.max(axis=1))
        np.testing.assert_allclose(c, a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    k = tilelang.compile(two_reductions(M, N, threads), target="opencl")
    b, c = np.zeros(M, np.float32), np.zeros(M, np.float32)
    k(a, b, c)
    np.testing.assert_array_equal(b, a.max(axis=1))
    np.testing.assert_allclose(c, a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
