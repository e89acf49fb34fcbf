"""Buffer views as TileLang writes them: T.reshape, T.view (same-width dtype) and
T.Tensor(shape, dtype, data=buf.data), over global tensors, shared tiles and fragments; every access goes
to the buffer that owns the storage (pass ExpandViewTileOps / ResolveBufferViews). Each kernel runs on the
CPU target and in the CUDA emulator against NumPy on seeded random inputs at ragged sizes."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 23
WHERE = ["cpu", "emulator"]


def _compile(f, where, **kw):
    if where == "cpu":
        return tilelang.compile(f, target="cpu", **kw)
    return tilelang.compile(f, target="cuda", execution_backend="emulator", **kw)


def test_reshape_of_a_global_tensor_copied_whole():
    # TileLang's own reshape test, as written there.
    N, M = 256, 16

    @T.prim_func
    def main(A: T.Buffer((N,), "float32"), B: T.Buffer((N // M, M), "float32")):
        with T.Kernel(1) as _:
            A_reshaped = T.reshape(A, [N // M, M])
            T.copy(A_reshaped, B)

    for where in WHERE:
        print(f"seed {SEED}")
        a = np.random.default_rng(SEED).standard_normal(N).astype("float32")
        b = np.zeros((N // M, M), "float32")
        _compile(main, where)(a, b)
        np.testing.assert_array_equal(b, a.reshape(N // M, M))


@pytest.mark.parametrize("where", WHERE)
def test_reshaped_global_tiles_with_ragged_rows_and_columns(where):
    # A flat (M * K,) tensor seen as (M, K) and tiled 32x32 with M, K not multiples of 32: accesses past
    # the *view's* row end must be guarded (a flat index would wrap into the next row).
    M, K = 70, 45

    @T.prim_func
    def scale(A: T.Tensor((M * K,), "float32"), B: T.Tensor((M, K), "float32")):
        with T.Kernel(T.ceildiv(K, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            A2 = T.reshape(A, (M, K))
            S = T.alloc_shared((32, 32), "float32")
            T.copy(A2[by * 32, bx * 32], S)
            for i, j in T.Parallel(32, 32):
                B[by * 32 + i, bx * 32 + j] = S[i, j] * 2.0 + A2[by * 32 + i, bx * 32 + j]

    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal(M * K).astype("float32")
    b = np.zeros((M, K), "float32")
    _compile(scale, where)(a, b)
    np.testing.assert_allclose(b, a.reshape(M, K).astype(np.float64) * 3.0, rtol=1e-6)


@pytest.mark.parametrize("where", WHERE)
def test_reshaped_shared_tile_and_fragment(where):
    # A 1-D shared tile read as 2-D, and a 2-D fragment written through a 1-D view.
    N = 100  # ragged against the 64-element tile

    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            S = T.alloc_shared((64,), "float32")
            S2 = T.reshape(S, (8, 8))
            F = T.alloc_fragment((8, 8), "float32")
            F1 = T.reshape(F, (64,))
            T.copy(A[bx * 64], S)
            for i, j in T.Parallel(8, 8):
                F[i, j] = S2[j, i]  # the 8x8 transpose of each 64-element chunk
            T.copy(F1, B[bx * 64])
            for i in T.Parallel(64):
                F1[i] = S[i] + 1.0
            for i, j in T.Parallel(8, 8):
                C[bx * 64 + i * 8 + j] = F[i, j]  # the owner read after writes through the view

    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal(N).astype("float32")
    b, c = np.zeros(N, "float32"), np.zeros(N, "float32")
    _compile(k, where)(a, b, c)
    pad = np.zeros(128, "float32")
    pad[:N] = a
    want = pad.reshape(2, 8, 8).transpose(0, 2, 1).reshape(128)[:N]
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(c, a + np.float32(1.0))


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float16", "int16"), ("bfloat16", "uint16")])
def test_view_with_a_dtype_of_the_same_width(where, src, dst):
    import ml_dtypes

    N = 100

    @T.prim_func
    def bits(A: T.Tensor((N,), src), B: T.Tensor((N,), dst), C: T.Tensor((N,), src)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            Ai = T.view(A, dtype=dst)
            Cv = T.Tensor((N,), dst, data=C.data)  # TileLang's other spelling of a view
            for i in T.Parallel(64):
                B[bx * 64 + i] = Ai[bx * 64 + i]
                Cv[bx * 64 + i] = Ai[bx * 64 + i]  # written through the view: C gets A's bits
            S = T.alloc_shared((64,), src)
            T.copy(Ai[bx * 64:bx * 64 + 64], T.view(S, dtype=dst))  # a tile op on views: element loops

    print(f"seed {SEED}")
    a = (np.random.default_rng(SEED).standard_normal(N) * 100).astype({"bfloat16": ml_dtypes.bfloat16}.get(src, src))
    b, c = np.zeros(N, dst), np.zeros_like(a)
    _compile(bits, where)(a, b, c)
    np.testing.assert_array_equal(b, a.view(dst))
    np.testing.assert_array_equal(c.view(dst), a.view(dst))


def test_a_view_is_printed_and_reparsed():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A2 = T.reshape(A, (8, 8))
            for i, j in T.Parallel(8, 8):
                B[i, j] = A2[j, i]

    text = k.script()
    assert "A2 = T.view(A, (8, 8), \"float32\")" in text, text
    again = T.parse_source(text)
    assert tilelang.structural_equal(again, k), tilelang.script(again)
    assert tilelang.structural_hash(again) == tilelang.structural_hash(k)


def test_writes_through_a_global_view_mark_the_owner_as_written():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            B2 = T.reshape(B, (8, 8))
            for i, j in T.Parallel(8, 8):
                B2[i, j] = A[i * 8 + j]

    kern = tilelang.compile(k, target="cpu")
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    b.setflags(write=False)
    with pytest.raises(tilelang.errors.TileLangArgumentError, match="read-only"):
        kern(a, b)  # B is written (through its view), so a read-only array is refused


def _expect(fn, exc, match):
    with pytest.raises(exc, match=match) as info:
        tilelang.compile(fn(), target="cpu")
    assert "test_views.py:" in str(info.value), str(info.value)  # the user's line


def test_errors_name_the_view_and_the_reason():
    def reshape_wrong_count():
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                V = T.reshape(A, (8, 9))
                V[0, 0] = 1.0

        return k

    with pytest.raises(TileLangTypeError, match=r"element counts must be equal"):
        reshape_wrong_count()

    def wider_dtype():
        @T.prim_func
        def k(A: T.Tensor((64,), "float16")):
            with T.Kernel(1, threads=64) as bx:
                V = T.view(A, (32,), "float32")
                V[0] = 1.0

        return k

    _expect(wider_dtype, TileLangUnsupportedError, r"'V' views the storage of 'A': its dtype float32 is 32 bits")

    def too_big():
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=64) as bx:
                V = T.view(A, (128,))
                V[0] = 1.0

        return k

    _expect(too_big, TileLangUnsupportedError, r"needs 128 elements .* but 'A' has 64")

    def gemm_on_a_reshaped_view():
        @T.prim_func
        def k(A: T.Tensor((16, 16), "float16"), C: T.Tensor((16, 16), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((256,), "float16")
                S2 = T.reshape(S, (16, 16))
                Acc = T.alloc_fragment((16, 16), "float32")
                T.copy(A, S2)
                T.clear(Acc)
                T.gemm(S2, S2, Acc)
                T.copy(Acc, C)

        return k

    _expect(gemm_on_a_reshaped_view, TileLangUnsupportedError, r"T.gemm on 'S2', a view with another shape")
