# expect: TileLangArgumentError: out_idx must hold parameter positions (ints), got 'x' in ['x']
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i]


tilelang.compile(main, target="cpu", out_idx=["x"])
