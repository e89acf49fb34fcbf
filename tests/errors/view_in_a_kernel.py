# expect: TileLangUnsupportedError: buffer 'V' views the storage of 'S': its dtype float32 is 32 bits wide and the owner's uint8 is 8 bits
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((256,), "uint8")
        V = T.alloc_shared((64,), "float32", data=S, byte_offset=0)  # error-here
        T.copy(A, V)
        T.copy(V, A)


tilelang.compile(main, target="cpu")
