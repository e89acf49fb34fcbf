# expect: TileLangTypeError: a scalar T.atomic_add needs a single element as destination
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.atomic_add(C[0:64, 0:64], 1.0)  # error-here
