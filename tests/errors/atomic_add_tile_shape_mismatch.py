# expect: TileLangTypeError: T.atomic_add destination 'C' tile is (64, 32) but the source 'C_local' tile is (64, 64)
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        C_local = T.alloc_fragment((64, 64), "float32")
        T.clear(C_local)
        T.atomic_add(C[0:64, 0:32], C_local)  # error-here
