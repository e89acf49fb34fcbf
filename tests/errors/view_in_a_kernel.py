# expect: TileLangUnsupportedError: buffer 'V' is declared as a view of 'S' (data=...): views describe the shared-memory plan of lowered IR
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((64,), "float32")
        V = T.alloc_shared((64,), "float32", data=S, byte_offset=0)  # error-here
        T.copy(A, S)
        T.copy(V, A)


tilelang.compile(main, target="cpu")
