# expect: TileLangUnsupportedError: fragment 'acc' is accessed outside a T.Parallel loop or tile op
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_fragment((128,), "float32")
        T.copy(A, acc)
        A[0] = acc[5]  # error-here


tilelang.compile(main, target="cuda")
