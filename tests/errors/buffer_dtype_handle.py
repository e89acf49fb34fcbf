# expect: TileLangTypeError: buffer 'A' cannot hold elements of type handle
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "handle")):  # error-here
    with T.Kernel(1, threads=128) as bx:
        pass
