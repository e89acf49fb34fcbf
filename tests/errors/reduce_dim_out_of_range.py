# expect: TileLangTypeError: dim=2 of T.reduce_sum is out of range for the 2-d source 'acc'
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_fragment((64, 64), "float32")
        row = T.alloc_fragment((64,), "float32")
        T.copy(A, acc)
        T.reduce_sum(acc, row, dim=2)  # error-here
        T.copy(row, B)
