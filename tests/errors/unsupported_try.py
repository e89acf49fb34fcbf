# expect: TileLangSyntaxError: unsupported Python construct 'Try' inside a T.prim_func
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        try:  # error-here
            A[0] = 1.0
        except Exception:
            pass
