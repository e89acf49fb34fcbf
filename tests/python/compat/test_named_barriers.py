"""Named barriers, T.sync_threads(barrier_id, arrive_count) (TileLang's top-k selector scans a histogram with
the first 256 threads under `if tx < RADIX:` and `T.sync_threads(3, RADIX)`). Before: "T.sync_threads() takes no
arguments". Now bar.sync id, count on CUDA (PTX checked, the emulator checks the count of arriving threads),
allowed under a condition on the thread index that reads no memory; the CPU target runs such a region in phases
for the threads the condition selects. A block-wide T.sync_threads() under such a condition stays an error."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangEmulationError, TileLangTypeError, TileLangUnsupportedError

R = 64


def scan_kernel(count=R, threads=128):
    @T.prim_func
    def scan(A: T.Tensor((R,), "int32"), B: T.Tensor((R,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((R,), "int32")
            v = T.alloc_var("int32")
            if tx < R:
                s[tx] = A[tx]
            T.sync_threads()
            if tx < R:  # a Hillis-Steele inclusive scan by the first R threads only
                for i in T.serial(6):
                    off = 1 << i
                    T.sync_threads(3, count)
                    if tx >= off:
                        v = s[tx] + s[tx - off]
                    T.sync_threads(3, count)
                    if tx >= off:
                        s[tx] = v
                T.sync_threads(3, count)
                B[tx] = s[R - 1 - tx]

    return scan


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80", "cuda -arch=sm_90a"])
def test_named_barrier_scan(target):
    seed = 12
    print(f"seed {seed}")
    a = np.random.default_rng(seed).integers(-1000, 1000, R).astype(np.int32)
    b = np.zeros(R, np.int32)
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    tilelang.compile(scan_kernel(), target=target, **kw)(a, b)
    np.testing.assert_array_equal(b, np.cumsum(a.astype(np.int64))[::-1])


def test_named_barrier_ptx():
    ptx = tilelang.compile(scan_kernel(), target="cuda -arch=sm_80").get_ptx()
    assert "bar.sync \t3, 64;" in ptx or "bar.sync 3, 64;" in ptx, [l for l in ptx.splitlines() if "bar" in l]


def test_the_emulator_checks_the_arriving_threads():
    k = tilelang.compile(scan_kernel(count=96), target="cuda -arch=sm_80", execution_backend="emulator")
    with pytest.raises(TileLangEmulationError, match=r"barrier_divergence.*bar.sync 3 expects 96 threads, reached by 64"):
        k(np.zeros(R, np.int32), np.zeros(R, np.int32))


def test_bad_named_barriers():
    with pytest.raises(TileLangTypeError, match="multiple of 32"):
        scan_kernel(count=48)
    with pytest.raises(TileLangTypeError, match="barrier_id is a constant from 0 to 15"):
        T.sync_threads(16, 32)

    @T.prim_func
    def block_sync_in_branch(A: T.Tensor((R,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            if tx < R:
                T.sync_threads()
                A[tx] = 1

    with pytest.raises(TileLangUnsupportedError, match="under a condition on the thread index"):
        tilelang.compile(block_sync_in_branch, target="cuda -arch=sm_80")


@pytest.mark.parametrize("target", ["hip", "metal", "opencl"])
def test_named_barriers_are_refused_where_the_target_has_none(target):
    with pytest.raises(TileLangUnsupportedError, match="named barrier of part of the block"):
        tilelang.compile(scan_kernel(), target=target, execution_backend="emulator" if target != "opencl" else None)
