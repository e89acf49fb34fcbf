# expect: TileLangTypeError: T.reduce_max destination 'row' is (32,) but reducing 'acc' (64, 128) over dim 1 gives (64,)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 128), "float32"), B: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_fragment((64, 128), "float32")
        row = T.alloc_fragment((32,), "float32")
        T.copy(A, acc)
        T.reduce_max(acc, row, dim=1)  # error-here
        T.copy(row, B)
