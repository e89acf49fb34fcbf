# expect: TileLangSyntaxError: T.alloc_fragment must be called inside a `with T.Kernel(...)` block
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    acc = T.alloc_fragment((128,), "float32")  # error-here
    with T.Kernel(1, threads=128) as bx:
        T.copy(acc, A)
