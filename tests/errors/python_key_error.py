# expect: TileLangSyntaxError: KeyError while evaluating this statement: 'block_N'
import tilelang.language as T

config = {"block_M": 64}


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(config["block_N"]):  # error-here
            A[i] = 0.0
