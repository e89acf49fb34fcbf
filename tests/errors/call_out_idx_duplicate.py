# expect: TileLangArgumentError: out_idx [2, 2] names parameter 2 ('C') twice
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), C: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            C[i] = A[i] + B[i]


tilelang.compile(main, target="cpu", out_idx=[2, 2])
