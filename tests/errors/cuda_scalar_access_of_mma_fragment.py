# expect: TileLangLayoutError: layout conflict for fragment 'acc': scalar access outside T.Parallel at
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.gemm(A_s, A_s, acc, clear_accum=True)  # error-here
        B[0] = acc[0, 5]  # a scalar read needs the whole tile in every thread; the mma layout splits it


tilelang.compile(main, target="cuda")
