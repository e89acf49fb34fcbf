# expect: TileLangTypeError: T.set_max_nreg: is_inc is 1 (raise the budget: setmaxnreg.inc) or 0 (lower it: .dec), got 2
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        with T.ws(0):
            T.set_max_nreg(40, 2)  # error-here
        for i in T.Parallel(256):
            B[i] = A[i]
