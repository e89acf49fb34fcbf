# expect: TileLangSyntaxError: unsupported Python construct 'FunctionDef' inside a T.prim_func
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        def helper(x):  # error-here
            return x * 2.0

        A[0] = helper(A[0])
