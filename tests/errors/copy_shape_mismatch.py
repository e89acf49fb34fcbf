# expect: TileLangTypeError: mismatched slice shapes in T.copy: the source 'A' tile is (64, 32) but the destination 'A_shared' tile is (64, 64)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256, 256), "float16")):
    with T.Kernel(4, threads=128) as bx:
        A_shared = T.alloc_shared((64, 64), "float16")
        T.copy(A[bx * 64:(bx + 1) * 64, 0:32], A_shared)  # error-here
