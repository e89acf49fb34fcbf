# expect: TileLangUnsupportedError: T.gemm on 'S2', a view with another shape or dtype than the buffer that owns its storage, is not supported
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16, 16), "float16"), C: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((256,), "float16")
        S2 = T.reshape(S, (16, 16))
        Acc = T.alloc_fragment((16, 16), "float32")
        T.copy(A, S2)
        T.clear(Acc)
        T.gemm(S2, S2, Acc)  # error-here
        T.copy(Acc, C)


tilelang.compile(main, target="cuda -arch=sm_80")
