# expect: TileLangUnsupportedError: buffer 'V' views the storage of 'S': it needs 128 elements (shape (128,)) but 'S' has 64
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((64,), "float32")
        V = T.view(S, (128,))  # error-here
        T.copy(A, V)


tilelang.compile(main, target="cpu")
