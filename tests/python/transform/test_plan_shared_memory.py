"""PlanSharedMemory: shared buffers become views of one byte buffer at 16-byte-aligned offsets;
buffers whose live ranges (top-level statements of the kernel body) do not overlap share bytes."""
import pytest
import tilelang.language as T
from tilelang.errors import TileLangResourceError

from passes import assert_equal, run


def test_reuse_when_live_ranges_do_not_overlap():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            X = T.alloc_shared((64,), "float32")
            Y = T.alloc_shared((64,), "float32")
            Z = T.alloc_shared((32,), "float16")
            tx = T.call_intrin("int32", "tl.thread_idx")
            X[tx] = A[tx]
            B[tx] = X[tx]
            Y[tx] = A[tx]
            Z[tx % 32] = T.cast(A[tx], "float16")
            B[tx] = Y[tx] + T.cast(Z[tx % 32], "float32")

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            smem = T.alloc_shared((320,), "uint8")
            X = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            Y = T.alloc_shared((64,), "float32", data=smem, byte_offset=0)
            Z = T.alloc_shared((32,), "float16", data=smem, byte_offset=256)
            tx = T.call_intrin("int32", "tl.thread_idx")
            X[tx] = A[tx]
            B[tx] = X[tx]
            Y[tx] = A[tx]
            Z[tx % 32] = T.cast(A[tx], "float16")
            B[tx] = Y[tx] + T.cast(Z[tx % 32], "float32")

    assert_equal(run("PlanSharedMemory", before), expected)


def test_over_the_limit_is_an_error_with_the_table():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            X = T.alloc_shared((40000,), "float32")
            tx = T.call_intrin("int32", "tl.thread_idx")
            X[tx] = A[tx]
            A[tx] = X[tx]

    with pytest.raises(TileLangResourceError, match=r"needs 160000 bytes of shared memory, over the 101376-byte limit of sm_86"):
        run("PlanSharedMemory", before, target="cuda -arch=sm_86")
