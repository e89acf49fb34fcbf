"""ExpandViewTileOps / ResolveBufferViews, before and expected: accesses through a view become accesses
of the buffer that owns the storage (row-major flatten, unflatten against the owner's shape; a dtype of the
same width through T.reinterpret); a T.copy on a reshaped view becomes element loops; a view with the
owner's shape and dtype is just another name. End-to-end numerics are in compat/test_views.py."""
import tilelang.language as T

from passes import assert_equal, run


def test_accesses_go_to_the_owner():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((8, 8), "int32")):
        with T.Kernel(1, threads=64) as bx:
            A2 = T.reshape(A, (8, 8))
            B1 = T.view(B, (64,), "float32")
            for i, j in T.Parallel(8, 8):
                B1[i * 8 + j] = A2[j, i]
            B[0, 0] = T.cast(A[0], "int32")  # the owners are also used directly: accesses are remapped

    @T.prim_func
    def expected(A: T.Tensor((64,), "float32"), B: T.Tensor((8, 8), "int32")):
        with T.Kernel(1, threads=64) as bx:
            for i, j in T.Parallel(8, 8):
                B[i, j] = T.reinterpret("int32", A[i + j * 8])
            B[0, 0] = T.cast(A[0], "int32")

    assert_equal(run("ResolveBufferViews", before), expected)


def test_a_copy_of_a_reshaped_view_becomes_element_loops():
    @T.prim_func
    def before(A: T.Tensor((64,), "float16"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float16")
            S2 = T.reshape(S, (8, 8))
            T.copy(A, S)
            T.copy(S2[0:4, 0:8], B[4:8, 0:8])

    @T.prim_func
    def expected(A: T.Tensor((64,), "float16"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float16")
            S2 = T.alloc_shared((8, 8), "float16", data=S, byte_offset=0)
            T.copy(A, S)
            for i0 in T.Parallel(4):
                for i1 in T.Parallel(8):
                    B[i0 + 4, i1] = T.cast(S2[i0, i1], "float32")

    assert_equal(run("ExpandViewTileOps", before), expected)


def test_a_view_with_the_owners_shape_and_dtype_keeps_the_tile_op():
    @T.prim_func
    def before(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((8, 8), "float32")
            V = T.view(S)
            T.copy(A, V)
            T.copy(V, B)

    @T.prim_func
    def expected(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((8, 8), "float32")
            T.copy(A, S)
            T.copy(S, B)

    assert_equal(run("ResolveBufferViews", before), expected)


def test_a_parameter_used_only_through_one_view_becomes_the_view():
    # TileLang's convolution example: the filter is read only as a 2-D matrix. The kernel's parameter takes
    # the view's shape, so the tile op keeps its region (an async copy on CUDA), not element loops.
    @T.prim_func
    def before(W: T.Tensor((3, 3, 4, 16), "float16"), O: T.Tensor((36, 16), "float16")):
        with T.Kernel(1, threads=128) as bx:
            W2 = T.Tensor((36, 16), "float16", W.data)
            S = T.alloc_shared((36, 16), "float16")
            T.copy(W2[0, 0], S)
            T.copy(S, O)

    @T.prim_func
    def expected(W2: T.Tensor((36, 16), "float16"), O: T.Tensor((36, 16), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((36, 16), "float16")
            T.copy(W2[0, 0], S)
            T.copy(S, O)

    assert_equal(run("ResolveBufferViews", before), expected)
