"""T.StridedTensor parameters (TileLang's `A: T.StridedTensor[(N, M), (1, stride), dtype]`): before, a
TileLangUnsupportedError. The kernel addresses the parameter as a dense row-major tensor; at each call the
argument's strides are checked against the declaration (an int must match, a T.dynamic symbol is bound
consistently), and a non-contiguous argument (a transposed or sliced view) is copied into a contiguous tensor
for the launch and back after it, with a TileLangPerformanceWarning. Checked on the CPU target and in the
emulator against NumPy on seeded inputs."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangPerformanceWarning, TileLangUnsupportedError

SEED = 8


def _scale_kernel(N, M):
    stride = T.dynamic("stride")

    @T.prim_func
    def scale(A: T.StridedTensor[(N, M), (1, stride), T.float32], B: T.StridedTensor((N, M), (stride, 1), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            tx = T.get_thread_binding()
            col = bx * 32 + tx
            for row in T.serial(N):
                if col < M:
                    B[row, col] = A[row, col] * 2.0 + 1.0

    return scale


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
def test_strided_views_in_and_out(target):
    N, M, S = 24, 40, 50  # ragged; A is the transposed view of a (M, S) array: strides (1, S)
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    base_a = rng.standard_normal((M, S)).astype(np.float32)
    a = base_a[:, :N].T  # shape (N, M), strides (1, S) in elements
    base_b = np.zeros((N, S), np.float32)
    b = base_b[:, :M]  # shape (N, M), strides (S, 1)
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    k = tilelang.compile(_scale_kernel(N, M), target=target, **kw)
    with pytest.warns(TileLangPerformanceWarning, match="T.StridedTensor argument 'A' with strides \\(1, 50\\) is "
                      "copied into a contiguous tensor"):
        k(a, b)
    np.testing.assert_allclose(base_b[:, :M], a.astype(np.float64) * 2 + 1, rtol=1e-6)
    assert not base_b[:, M:].any()  # nothing outside the view was written


def test_declared_strides_are_checked():
    N, M = 8, 16
    k = tilelang.compile(_scale_kernel(N, M), target="cpu")
    a = np.zeros((M, N), np.float32).T  # strides (1, N)
    b = np.zeros((N, 2 * M), np.float32)[:, :M]  # strides (2M, 1): stride symbol would be 2M, A says N
    with pytest.raises(TileLangArgumentError, match="stride 'stride' is 32 here but 8 in an earlier argument"):
        k(a, b)
    b_ok = np.zeros((N, M), np.float32)  # contiguous: strides (M, 1); A's must then be (1, M)
    with pytest.raises(TileLangArgumentError, match="stride 'stride' is 16 here but 8"):
        k(a, b_ok)

    @T.prim_func
    def fixed(A: T.StridedTensor((4, 4), (8, 1), "float32")):
        with T.Kernel(1, threads=4) as bx:
            A[0, 0] = 1.0

    kf = tilelang.compile(fixed, target="cpu")
    with pytest.raises(TileLangArgumentError, match="declared with stride 8"):
        kf(np.zeros((4, 4), np.float32))
    base = np.zeros((4, 8), np.float32)
    kf(base[:, :4])  # strides (8, 1): accepted
    assert base[0, 0] == 1.0


def test_strided_tensor_errors():
    with pytest.raises(Exception, match="2 dimensions but 1 strides"):
        T.StridedTensor((4, 4), (1,), "float32")
    with pytest.raises(TileLangUnsupportedError, match="single T.dynamic symbol"):
        s = T.dynamic("s")
        T.StridedTensor((4, 4), (s * 2, 1), "float32")


def test_stride_symbol_in_an_assumption():
    stride = T.dynamic("stride")

    @T.prim_func
    def copy_rows(dst: T.StridedTensor((1, 64), (stride, 1), "uint8"),
                  src: T.StridedTensor((1, 64), (stride, 1), "uint8")):
        T.assume(stride % 2 == 0)
        with T.Kernel(1):
            for token, feature in T.Parallel(1, 64):
                dst[token, feature] = src[token, feature]

    k = tilelang.compile(copy_rows, target="cpu")
    src = np.arange(128, dtype=np.uint8).reshape(2, 64)[:1]
    dst = np.zeros((1, 64), np.uint8)
    k(dst, src)
    np.testing.assert_array_equal(dst, src)
