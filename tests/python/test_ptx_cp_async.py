"""TileLang's explicit cp.async names (the language issue's missing names; its pipelined sparse MLA and
warp-specialised MLA decode schedule their K/V copies with them): T.ptx_cp_async of T.access_ptr operands,
T.ptx_commit_group / T.ptx_wait_group and T.cp_async_barrier_noinc, in the emulator against NumPy (rows
outside the source tensor are zero-filled), built by NVRTC (cp.async and cp.async.mbarrier.arrive.noinc in
the PTX); targets without cp.async refuse them at the line. Before: TileLangUnsupportedError / AttributeError."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangEmulationError, TileLangTypeError, TileLangUnsupportedError

SEED = 20261205
SM90A = {"kind": "cuda", "arch": "sm_90a"}


def reversed_rows(M, N, with_barrier, wait=True):
    """B = rows of A reversed within each 16-row block: every thread cp.async's 16-byte chunks of A into S,
    then reads a chunk another thread copied (after the group wait and a barrier, or after the mbarrier)."""
    assert N % 8 == 0

    @T.prim_func
    def k(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
            S = T.alloc_shared((16, N), "float16")
            tid = T.get_thread_binding()
            if with_barrier:
                bar = T.alloc_barrier([128])
            for c in T.serial(T.ceildiv(16 * N // 8, 128)):
                ch = c * 128 + tid
                if ch < 16 * N // 8:
                    r = ch // (N // 8)
                    col = ch % (N // 8) * 8
                    T.ptx_cp_async(T.access_ptr(S[r, col], "w", 8), T.access_ptr(A[bx * 16 + r, col], "r", 8), 8)
            if with_barrier:
                T.cp_async_barrier_noinc(bar[0])
                if wait:
                    T.mbarrier_wait_parity(bar[0], 0)
            else:
                T.ptx_commit_group()
                if wait:
                    T.ptx_wait_group(0)
                T.sync_threads()
            for i, j in T.Parallel(16, N):
                if bx * 16 + i < M:
                    B[bx * 16 + i, j] = S[15 - i, j]

    return k


def _reference(a):
    M, N = a.shape
    pad = np.zeros(((M + 15) // 16 * 16, N), a.dtype)
    pad[:M] = a
    return pad.reshape(-1, 16, N)[:, ::-1].reshape(-1, N)[:M]


@pytest.mark.parametrize("with_barrier", [False, True], ids=["groups", "mbarrier"])
def test_explicit_cp_async_matches_numpy_in_the_emulator(with_barrier):
    M, N = 40, 64  # ragged: the last block's rows 40..47 read outside A and are zero-filled
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal((M, N)).astype(np.float16)
    b = np.full((M, N), np.nan, np.float16)
    target = SM90A if with_barrier else "cuda"
    tilelang.compile(reversed_rows(M, N, with_barrier), target=target, execution_backend="emulator")(a, b)
    np.testing.assert_array_equal(b, _reference(a))


@pytest.mark.parametrize("with_barrier", [False, True], ids=["groups", "mbarrier"])
def test_reading_before_the_copies_land_is_reported(with_barrier):
    """Without the wait the bytes have not landed: the emulator reports the reads."""
    target = SM90A if with_barrier else "cuda"
    k = tilelang.compile(reversed_rows(32, 64, with_barrier, wait=False), target=target, execution_backend="emulator")
    a = np.ones((32, 64), np.float16)
    with pytest.raises(TileLangEmulationError, match="uninitialized|race|deadlock"):
        k(a, np.zeros_like(a))


def test_ptx_has_the_instructions():
    ptx = tilelang.compile(reversed_rows(40, 64, False), target="cuda -arch=sm_80").get_ptx()
    assert "cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx
    assert "cp.async.commit_group" in ptx and "cp.async.wait_group 0" in ptx
    ptx = tilelang.compile(reversed_rows(40, 64, True), target=SM90A).get_ptx()
    assert re.search(r"cp\.async\.mbarrier\.arrive\.noinc\.shared(::cta)?\.b64", ptx), ptx


@pytest.mark.parametrize("target", ["cpu", "hip", "metal", "opencl"])
def test_targets_without_cp_async_refuse_it_at_the_line(target):
    with pytest.raises(TileLangUnsupportedError, match="cp.async") as e:
        tilelang.compile(reversed_rows(40, 64, False), target=target)
    assert "test_ptx_cp_async.py" in str(e.value)


def test_bad_operands_are_type_errors():
    with pytest.raises(TileLangTypeError, match="4, 8 or 16 bytes"):
        @T.prim_func
        def k(A: T.Tensor((64,), "float16")):
            with T.Kernel(1, threads=32):
                S = T.alloc_shared((64,), "float16")
                T.ptx_cp_async(T.access_ptr(S[0], "w"), T.access_ptr(A[0], "r"), 3)
    with pytest.raises(TileLangTypeError, match="global to shared"):
        @T.prim_func
        def k2(A: T.Tensor((64,), "float16")):
            with T.Kernel(1, threads=32):
                S = T.alloc_shared((64,), "float16")
                T.ptx_cp_async(T.access_ptr(A[0], "w"), T.access_ptr(S[0], "r"), 8)
    with pytest.raises(TileLangTypeError, match="covers 4"):
        @T.prim_func
        def k3(A: T.Tensor((64,), "float16")):
            with T.Kernel(1, threads=32):
                S = T.alloc_shared((64,), "float16")
                T.ptx_cp_async(T.access_ptr(S[0], "w", 4), T.access_ptr(A[0], "r", 8), 8)


def _cp_async_to_wgmma(M, N, K):
    """Warp group 1 copies A and B into shared memory with T.ptx_cp_async and arrives with
    T.cp_async_barrier_noinc; warp group 0 waits and multiplies them with wgmma (the hand-off of TileLang's
    warp-specialised MLA decode and pipelined sparse MLA)."""

    @T.prim_func
    def k(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            ready = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx >= 128:
                t = tx - 128
                for c in T.serial(M * K // 8 // 128):
                    ch = c * 128 + t
                    T.ptx_cp_async(T.access_ptr(As[ch // (K // 8), ch % (K // 8) * 8], "w", 8),
                                   T.access_ptr(A[ch // (K // 8), ch % (K // 8) * 8], "r", 8), 8)
                for c in T.serial(K * N // 8 // 128):
                    ch = c * 128 + t
                    T.ptx_cp_async(T.access_ptr(Bs[ch // (N // 8), ch % (N // 8) * 8], "w", 8),
                                   T.access_ptr(B[ch // (N // 8), ch % (N // 8) * 8], "r", 8), 8)
                T.cp_async_barrier_noinc(ready[0])
            else:
                T.mbarrier_wait_parity(ready[0], 0)
                T.gemm(As, Bs, acc, clear_accum=True)
                T.copy(acc, C)

    return k


def test_cp_async_handed_to_a_wgmma_is_fenced_by_its_writers():
    """cp.async writes through the generic proxy and wgmma reads through the async proxy, so the copying
    threads must fence their landed bytes (PTX ISA: a cross-proxy fence between the two). Before: the arrival on
    completion (cp.async.mbarrier.arrive.noinc) left no place for that fence, and the emulator reported
    async_proxy. Expected: on sm_90a each copying thread completes its copies, fences them and arrives (the
    choice says so), and the wgmma's result matches NumPy."""
    M, N, K = 64, 64, 64
    func = _cp_async_to_wgmma(M, N, K)
    g = tilelang.compile(func, target=SM90A)
    ptx = g.get_ptx()
    assert "wgmma.mma_async" in ptx and "fence.proxy.async" in ptx and "cp.async.mbarrier.arrive.noinc" not in ptx
    assert any("cp_async_barrier_noinc: the thread waits" in c for c in g.choices), g.choices
    k = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    a = r.standard_normal((M, K)).astype(np.float16)
    b = r.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
