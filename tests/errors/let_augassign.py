# expect: TileLangSyntaxError: 'idx' is an immutable kernel value; allocate it with T.alloc_var(dtype) to update it in place
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((1024,), "float32")):
    with T.Kernel(8, threads=128) as bx:
        for i in T.Parallel(128):
            idx = bx * 128 + i
            idx += 1  # error-here
            A[idx] = 0.0
