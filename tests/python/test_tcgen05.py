"""TileLang's explicit Blackwell gemm on the tcgen05 family (docs/blackwell.md): T.alloc_tmem, T.tcgen05_gemm
(one thread issues tcgen05.mma kind::f16 into tensor memory and commits to the program's mbarrier) and T.copy from
tensor memory into a fragment (tcgen05.ld .32x32b). Compiled for sm_100a through NVRTC and ptxas (PTX and SASS
checked) and run in the emulator, which implements tcgen05 from the PTX ISA, against float64 NumPy on seeded
random inputs, ragged sizes included; the refusals elsewhere."""
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError, TileLangUnsupportedError
from tilelang.tools.sass import find_cuobjdump

SM100A = "cuda -arch=sm_100a"
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def tc_gemm(M, N, K, bM=128, bN=128, bK=64, trans_B=True, stages=2, threads=128, dtype="float16", acc="float32",
            out=None):
    """C = A @ B (B stored [N, K] with trans_B, else [K, N]), the accumulator in tensor memory, in the style of
    TileLang's gemm_tcgen05 example: the program waits on its mbarrier after each tcgen05 gemm."""
    B_shape = (N, K) if trans_B else (K, N)
    B_tile = (bN, bK) if trans_B else (bK, bN)
    out = out or dtype

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), out)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bM, bK), dtype)
            B_s = T.alloc_shared(B_tile, dtype)
            C_tmem = T.alloc_tmem([bM, bN], acc)
            mbar = T.alloc_barrier(1)
            C_l = T.alloc_fragment((bM, bN), acc)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                if trans_B:
                    T.copy(B[bx * bN, k * bK], B_s)
                else:
                    T.copy(B[k * bK, bx * bN], B_s)
                T.tcgen05_gemm(A_s, B_s, C_tmem, False, trans_B, mbar=mbar, clear_accum=k == 0)
                T.mbarrier_wait_parity(mbar, k % 2)
            T.copy(C_tmem, C_l)
            T.copy(C_l, C[by * bM, bx * bN])

    return main


@pytest.mark.parametrize("M,N,K,kw", [
    (256, 256, 256, {}),
    (256, 200, 200, {}),  # ragged N and K
    (128, 256, 192, {"trans_B": False}),  # B MN-major
    (256, 128, 256, {"dtype": "bfloat16"}),
    (128, 256, 128, {"threads": 256}),  # two column groups of four warps
    (128, 128, 192, {"stages": 1}),
    (256, 128, 128, {"pc": {"tl.disable_tma_lower": True, "tl.disable_warp_specialized": True}}),  # cp.async copies
])
def test_tcgen05_gemm_in_the_emulator(M, N, K, kw):
    kw = dict(kw)
    pc = kw.pop("pc", None)
    dt = kw.get("dtype", "float16")
    tb = kw.get("trans_B", True)
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(NP[dt])
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(NP[dt])
    c = np.zeros((M, N), NP[dt])
    k = tilelang.compile(tc_gemm(M, N, K, **kw), target=SM100A, execution_backend="emulator", pass_configs=pc)
    assert any("tcgen05.mma.cta_group::1.kind::f16" in ch for ch in k.choices), k.choices
    k(a, b, c)
    bd = b.astype(np.float64)
    ref = a.astype(np.float64) @ (bd.T if tb else bd)
    ulp = 2.0**-10 if dt == "float16" else 2.0**-7
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=ulp, atol=ulp * np.sqrt(K))


def _tf32(x):
    """float32 values as the emulators read kind::tf32 operands: the lower 13 bits dropped."""
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("M,N,K,bK", [(256, 256, 256, 32), (200, 136, 96, 32), (128, 128, 192, 64)])
def test_float32_gemm_on_tcgen05_kind_tf32(M, N, K, bK):
    """Before: T.tcgen05_gemm with float32 A and B was refused ("takes float16 or bfloat16 ..."). Expected:
    tcgen05.mma kind::tf32 (instruction descriptor A / B type TF32 = 2, k8: 32 bytes of K), A [M, K] and B [N, K].
    How the tensor cores make tf32 of a float32 is not in the ISA's tcgen05 text; its wgmma text truncates the
    lower 13 bits, and both emulators do that for tcgen05 (an assumption only a GPU can confirm). Ragged sizes and
    128- and 256-byte tile rows against float64 NumPy of the truncated inputs: rounding instead (cvt.rna) would
    miss by about 1e-3 of the result."""
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    k = tilelang.compile(tc_gemm(M, N, K, bK=bK, dtype="float32"), target=SM100A, execution_backend="emulator")
    assert any("tcgen05.mma.cta_group::1.kind::tf32" in ch and "tf32_tf32" in ch for ch in k.choices), k.choices
    k(a, b, c)
    ref = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.sqrt(K))


def test_float32_tcgen05_gemm_assembles_and_mn_major_is_refused():
    """kind::tf32 in the PTX and the SASS, no spills; a float32 B stored [K, N] (MN-major, which 32-bit operands
    take only with the 128-byte swizzle of 32-byte atoms) is refused with the reason."""
    k = tilelang.compile(tc_gemm(512, 512, 512, bK=32, dtype="float32"), target=SM100A)
    assert "tcgen05.mma.cta_group::1.kind::tf32" in k.get_ptx()
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert re.search(r"\bUTC\w*MMA\b", k.get_sass())
    with pytest.raises(TileLangError, match=r"float32 \(kind::tf32\) operands are K-major shared tiles here"):
        tilelang.compile(tc_gemm(256, 256, 256, bK=32, dtype="float32", trans_B=False), target=SM100A,
                         execution_backend="emulator")


def test_tcgen05_gemm_assembles_for_sm100a():
    k = tilelang.compile(tc_gemm(512, 512, 512), target=SM100A)
    ptx = k.get_ptx()
    for s in ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "tcgen05.relinquish_alloc_permit",
              "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.commit.cta_group::1.mbarrier::arrive::one",
              "tcgen05.ld.sync.aligned.32x32b.x8.b32", "tcgen05.wait::ld", "tcgen05.dealloc.cta_group::1",
              "cp.async.bulk.tensor.2d"):
        assert s in ptx, s
    # TMA (the async proxy) writes the operands: no fence.proxy.async; cp.async (generic proxy) writes: fenced
    assert "fence.proxy.async" not in ptx
    cp = tilelang.compile(tc_gemm(512, 512, 512), target=SM100A, pass_configs={"tl.disable_tma_lower": True})
    assert "cp.async.cg" in cp.get_ptx() and "fence.proxy.async" in cp.get_ptx()
    assert "mma.sync" not in ptx and "wgmma" not in ptx
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert find_cuobjdump() is not None, "scripts/setup.sh installs cuobjdump (nvidia-cuda-cuobjdump)"
    sass = k.get_sass()
    assert re.search(r"\bUTCHMMA\b", sass), "no tcgen05 MMA (UTCHMMA) in the SASS"
    tmem = [c for c in k.choices if "tensor memory:" in c]
    assert len(tmem) == 1 and "128 columns" in tmem[0], k.choices


def test_other_targets_refuse_tensor_memory():
    for target in ("cuda -arch=sm_90a", "cuda -arch=sm_120a", "hip -arch=gfx942"):
        with pytest.raises(TileLangUnsupportedError, match="tcgen05 family"):
            tilelang.compile(tc_gemm(128, 128, 64), target=target)
    @T.prim_func
    def read_only(C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            C_tmem = T.alloc_tmem([128, 128], "float32")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.copy(C_tmem, C_l)
            T.copy(C_l, C)

    with pytest.raises(TileLangUnsupportedError, match="CPU target has none"):
        tilelang.compile(read_only, target="cpu")


def _one(C_kind="tmem", tmem_rows=128, **gemm_kw):
    @T.prim_func
    def g(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            acc = (T.alloc_tmem([tmem_rows, 128], "float32") if C_kind == "tmem"
                   else T.alloc_fragment((128, 128), "float32"))
            mbar = T.alloc_barrier(1)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.tcgen05_gemm(A_s, B_s, acc, False, True, mbar=mbar, clear_accum=True, **gemm_kw)
            T.mbarrier_wait_parity(mbar, 0)
    return g


def test_misuse_is_a_clear_error():
    with pytest.raises(TileLangError, match="must be tensor memory"):
        tilelang.compile(_one(C_kind="fragment"), target=SM100A)
    with pytest.raises(TileLangUnsupportedError, match=r"shapes do not agree: A 128x64, B 128x64, C 64x128"):
        tilelang.compile(_one(tmem_rows=64), target=SM100A)
    with pytest.raises(TileLangUnsupportedError, match=r"\[128, N\]"):
        tilelang.compile(_one(tmem_rows=32), target=SM100A)
    with pytest.raises(TileLangUnsupportedError, match="with use_2cta each block holds N / 2 = 64 columns of B"):
        tilelang.compile(_one(use_2cta=True), target=SM100A)
    with pytest.raises(TileLangError, match="warp policy"):
        _one(policy=T.GemmWarpPolicy.FullRow)


F8 = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


@pytest.mark.parametrize("dtype,acc,bM,threads,backend", [
    ("float8_e4m3fn", "float16", 64, 256, "emulator"),  # TileLang's gemm_fp8_sm100 shape: M = 64, f16 D
    ("float8_e5m2", "float32", 64, 256, "emulator"),
    ("float16", "float16", 64, 128, "emulator"),
    ("float16", "float16", 128, 128, "emulator"),  # M = 128 with a float16 D
    ("float8_e4m3fn", "float16", 64, 256, "ptx"),
])
def test_m64_tiles_and_float16_accumulators(dtype, acc, bM, threads, backend):
    """tcgen05.mma with M = 64 (layout F: rows 16 q .. + 16 in lanes 32 q .. + 16, read with tcgen05.ld
    .16x32bx2) and with a float16 accumulator (D type F16: one value a 32-bit column, its lower half). Before:
    [64, N] tensor memory and float16 accumulators were refused. Expected: the product against NumPy float64 at
    a ragged size, within float16 accumulation error (each instruction's sum rounded once into D)."""
    M, N, K = 200, 136, 192
    bK = 64 if dtype == "float16" else 128
    f = tc_gemm(M, N, K, bM=bM, bN=128, bK=bK, threads=threads, dtype=dtype, acc=acc, out=acc)
    k = tilelang.compile(f, target=SM100A, execution_backend=backend)
    mma = [c for c in k.choices if "tcgen05.mma" in c]
    assert mma and f"{bM}x128x" in mma[0], k.choices
    ld = [c for c in k.choices if "tcgen05.ld" in c]
    assert ld and (".16x32bx2" in ld[0]) == (bM == 64), ld
    assert ("float16 values, bits 0-15" in ld[0]) == (acc == "float16"), ld
    rng = _rng()
    npdt = F8.get(dtype, np.float16)
    a = rng.standard_normal((M, K)).astype(npdt)
    b = rng.standard_normal((N, K)).astype(npdt)
    c = np.zeros((M, N), np.float16 if acc == "float16" else np.float32)
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    tol = 2.0**-10 * np.sqrt(K) * 4 if acc == "float16" else 1e-5 * np.sqrt(K)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("bM,acc,threads", [(64, "float32", 128), (64, "float16", 256), (128, "float16", 128)])
def test_the_automatic_path_takes_m64_and_float16_accumulators(bM, acc, threads):
    """T.gemm across a loop into a 64-row or float16 fragment. Before: it stayed on mma.sync ("takes 128" / "a
    float32 accumulator"). Expected: tcgen05.mma into tensor memory (M = 64: layout F, read with .16x32bx2), the
    product against NumPy float64 at a ragged size."""
    import kernels

    M, N, K = 200, 136, 192
    f = kernels.matmul_transposed(M, N, K, bM, 128, 64, trans_B=True, dtype="float16", out_dtype=acc,
                                  accum_dtype=acc, num_stages=2, threads=threads)
    k = tilelang.compile(f, target=SM100A, execution_backend="emulator")
    assert any(f"tcgen05.mma.cta_group::1.kind::f16 {bM}x128x16" in c for c in k.choices), k.choices
    assert not any("uses mma.sync" in w for w in k.warnings), k.warnings
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16 if acc == "float16" else np.float32)
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    tol = 2.0**-10 * np.sqrt(K) * 4 if acc == "float16" else 1e-5 * np.sqrt(K)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol)


def test_m64_tiles_and_float16_accumulators_assemble_for_sm100a():
    """The M = 64 fp8 GEMM with a float16 accumulator: .16x32bx2 loads, the F16 D type (bits 4-5 of the
    instruction descriptor 0) and M >> 4 = 4 (bits 24-28) in the PTX; ptxas assembles it, no spills."""
    k = tilelang.compile(tc_gemm(512, 512, 512, bM=64, bN=256, bK=128, threads=256, dtype="float8_e4m3fn",
                                 acc="float16"), target=SM100A)
    ptx = k.get_ptx()
    assert "tcgen05.ld.sync.aligned.16x32bx2.x8.b32" in ptx and "tcgen05.mma.cta_group::1.kind::f8f6f4" in ptx
    idesc = (4 << 24) | ((256 >> 3) << 17)  # E4M3 A and B (0), K-major, F16 D (0)
    assert str(idesc) in ptx or hex(idesc) in ptx.lower(), "no M = 64, N = 256, F16-D instruction descriptor"
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    sass = k.get_sass()
    assert re.search(r"\bUTCQMMA\b", sass), "no tcgen05 fp8 MMA (UTCQMMA) in the SASS"
    # .16x32bx2: one tensor-memory load for lanes 0-15 and one for lanes 16-31 (16 data paths of 32 bits)
    assert "LDTM.16dp32bit_t0_t15" in sass and "LDTM.16dp32bit_t16_t31" in sass, "no .16x32bx2 loads in the SASS"


def test_m64_and_float16_accumulator_limits_are_clear_errors():
    with pytest.raises(TileLangUnsupportedError, match="M = 64 accumulator .* cta_group::1"):
        _pair64()


def _accumulate_onto(M, acc):
    """C_t = C0 (T.copy from a fragment into tensor memory), then C_t += A @ B^T (clear_accum=False), read back."""

    @T.prim_func
    def g(A: T.Tensor((M, 64), "float16"), B: T.Tensor((128, 64), "float16"), C0: T.Tensor((M, 128), acc),
          C: T.Tensor((M, 128), acc)):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((M, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            C_t = T.alloc_tmem([M, 128], acc)
            C_r = T.alloc_fragment((M, 128), acc)
            mbar = T.alloc_barrier(1)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(C0, C_r)
            T.copy(C_r, C_t)
            T.tcgen05_gemm(A_s, B_s, C_t, False, True, mbar=mbar, clear_accum=False)
            T.mbarrier_wait_parity(mbar, 0)
            T.copy(C_t, C_r)
            T.copy(C_r, C)

    return g


@pytest.mark.parametrize("M,acc", [(128, "float16"), (64, "float32"), (64, "float16")])
def test_an_accumulator_written_from_registers_then_accumulated(M, acc):
    """T.copy of a fragment into a float16 accumulator (each value in the lower half of its column) or an M = 64
    one (tcgen05.st .16x32bx2), then an MMA accumulating onto it. Before: refused. Expected: C0 + A @ B^T."""
    k = tilelang.compile(_accumulate_onto(M, acc), target=SM100A, execution_backend="emulator")
    st = [c for c in k.choices if "tcgen05.st" in c]
    assert st and (".16x32bx2" in st[0]) == (M == 64), st
    rng = _rng()
    a = rng.standard_normal((M, 64)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    npacc = np.float16 if acc == "float16" else np.float32
    c0 = rng.standard_normal((M, 128)).astype(npacc)
    c = np.zeros((M, 128), npacc)
    k(a, b, c0, c)
    ref = c0.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64).T
    tol = 2.0**-10 * 8 * 4 if acc == "float16" else 1e-5 * 8
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol)
    if M == 64:  # ptxas: a tensor-memory store for lanes 0-15 and one for lanes 16-31
        sass = tilelang.compile(_accumulate_onto(M, acc), target=SM100A).get_sass()
        assert "STTM.16dp32bit_t0_t15" in sass and "STTM.16dp32bit_t16_t31" in sass


def _pair64():
    @T.prim_func
    def g(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2):
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            C_t = T.alloc_tmem([64, 128], "float32")
            mbar = T.alloc_barrier(1)
            T.copy(A[0:64, 0:64], A_s)
            T.copy(B[0:64, 0:64], B_s)
            T.tcgen05_gemm(A_s, B_s, C_t, False, True, mbar=mbar, clear_accum=True, use_2cta=True)
            T.mbarrier_wait_parity(mbar, 0)
    tilelang.compile(g, target=SM100A)


def _read_d(wait):
    """C = A @ B^T through tensor memory, D read back after the mbarrier wait (or, wait=False, after a barrier of
    the block only)."""
    @T.prim_func
    def g(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            acc = T.alloc_tmem([128, 128], "float32")
            C_l = T.alloc_fragment((128, 128), "float32")
            mbar = T.alloc_barrier(1)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.tcgen05_gemm(A_s, B_s, acc, False, True, mbar=mbar, clear_accum=True)
            if wait:
                T.mbarrier_wait_parity(mbar, 0)
            else:
                T.sync_threads()
            T.copy(acc, C_l)
            T.copy(C_l, C)
            if not wait:
                T.mbarrier_wait_parity(mbar, 0)
    return g


@pytest.mark.parametrize("backend", ["emulator", "ptx"])
def test_reading_tensor_memory_before_the_commit_completes_is_reported(backend):
    """before: tcgen05.ld after the tcgen05.commit but with no wait on its mbarrier read D as if the mma had
    completed (the emulators complete it at the commit). expected: reported in both emulators, at the DSL line;
    with the wait the numbers match NumPy."""
    rng = _rng()
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    tilelang.compile(_read_d(True), target=SM100A, execution_backend=backend)(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-4)
    with pytest.raises(TileLangError) as e:
        tilelang.compile(_read_d(False), target=SM100A, execution_backend=backend)(a, b, np.zeros_like(c))
    kinds = {k for k, _ in e.value.reports}
    assert kinds == {"tcgen05_not_waited"}, str(e.value)[:2000]
    assert "before this thread waited for the mbarrier phase" in str(e.value)


@pytest.mark.parametrize("adt,bdt,trans_B", [("float8_e4m3fn", "float8_e4m3fn", True),
                                             ("float8_e5m2", "float8_e4m3fn", True),
                                             ("float8_e4m3fn", "float8_e5m2", False)])
def test_fp8_gemm_on_tcgen05_kind_f8f6f4(adt, bdt, trans_B):
    """T.gemm of 8-bit floats (e4m3 / e5m2, mixed, B either way) runs as tcgen05.mma kind::f8f6f4 (k32) on
    sm_100a: exact products, float32 sums, against NumPy at a ragged size."""
    import kernels

    npdt = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
    M, N, K = 200, 136, 192
    f = kernels.matmul_transposed(M, N, K, 128, 128, 64, trans_B=trans_B, dtype=adt, b_dtype=bdt,
                                  out_dtype="float32", num_stages=2)
    k = tilelang.compile(f, target=SM100A, execution_backend="emulator")
    assert any("kind::f8f6f4" in c for c in k.choices), k.choices
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(npdt[adt])
    b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(npdt[bdt])
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    bd = b.astype(np.float64)
    ref = a.astype(np.float64) @ (bd.T if trans_B else bd)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.sqrt(K))
    built = tilelang.compile(f, target=SM100A)
    assert "tcgen05.mma.cta_group::1.kind::f8f6f4" in built.get_ptx() and "mma.sync" not in built.get_ptx()
    assert re.search(r"\bUTCQMMA\b", built.get_sass()), "no tcgen05 fp8 MMA (UTCQMMA) in the SASS"


def ws_gemm(M, N, K, bM=128, bN=128, bK=64, stages=3):
    """A warp-specialised tcgen05 GEMM (C = A @ B^T, B stored [N, K]): warp 0 loads the tiles with TMA into a ring of
    `stages` buffers, warp 1 issues the MMAs (T.tcgen05_gemm in its branch, each committing to the stage's `free`
    barrier) and commits them all to `done` (T.tcgen05_mma_arrive); every thread then waits on `done` and reads the
    accumulator out of tensor memory."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
            A_s = T.alloc_shared((stages, bM, bK), "float16")
            B_s = T.alloc_shared((stages, bN, bK), "float16")
            acc = T.alloc_tmem([bM, bN], "float32")
            out = T.alloc_fragment((bM, bN), "float32")
            full = T.alloc_barrier([1] * stages)
            free = T.alloc_barrier([1] * stages)
            done = T.alloc_barrier(1)
            tx = T.get_thread_binding()
            n_k = T.ceildiv(K, bK)
            if tx < 32:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(free[s], ((k // stages) & 1) ^ 1)
                    T.tma_copy(A[by * bM:(by + 1) * bM, k * bK:(k + 1) * bK], A_s[s, :, :], barrier=full[s])
                    T.tma_copy(B[bx * bN:(bx + 1) * bN, k * bK:(k + 1) * bK], B_s[s, :, :], barrier=full[s])
                    if tx == 0:
                        T.mbarrier_arrive(full[s])
            elif tx < 64:
                for k in T.serial(n_k):
                    s = k % stages
                    T.mbarrier_wait_parity(full[s], (k // stages) & 1)
                    T.tcgen05_gemm(A_s[s, :, :], B_s[s, :, :], acc, False, True, mbar=free[s], clear_accum=k == 0)
                T.tcgen05_mma_arrive(done)
            T.mbarrier_wait_parity(done, 0)
            T.copy(acc, out)
            T.copy(out, C[by * bM, bx * bN])

    return main


@pytest.mark.parametrize("M,N,K", [(256, 256, 384), (200, 136, 320)])
def test_warp_specialised_tcgen05_gemm(M, N, K):
    """TileLang's warp-specialised Blackwell form: the MMA warp's first thread issues (no barrier of the block: the
    other warps do not reach it; the TMA warp's mbarriers order the operands), a fiber per warp in the emulator so
    the warps wait on each other's arrivals; ragged M and N (TMA fills the tails with zeros)."""
    rng = _rng()
    f = ws_gemm(M, N, K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    k = tilelang.compile(f, target=SM100A, execution_backend="emulator")
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    assert any("issued by thread 32 of its branch" in x for x in k.choices), k.choices


def test_warp_specialised_tcgen05_gemm_assembles_for_sm100a():
    k = tilelang.compile(ws_gemm(512, 512, 512), target=SM100A)
    ptx = k.get_ptx()
    assert ptx.count("tcgen05.commit.cta_group::1.mbarrier::arrive::one") >= 2  # each gemm's and the final one
    assert "tcgen05.mma.cta_group::1.kind::f16" in ptx and "fence.proxy.async" not in ptx
    assert re.search(r"\bUTCHMMA\b", k.get_sass()), "no tcgen05 MMA in the SASS"
    src = k.get_kernel_source()
    # no barrier of the whole block inside the MMA warp's branch
    branch = src[src.index("tl::tcgen05_mma_f16"):]
    assert "__syncthreads" not in branch[:branch.index("tl::tcgen05_commit")], src


def test_issue_in_a_thread_branch_needs_tma_written_operands_and_a_known_range():
    def g(cond, tma=True):
        @T.prim_func
        def main(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 128), "float32")):
            with T.Kernel(1, threads=256):
                A_s = T.alloc_shared((128, 64), "float16")
                B_s = T.alloc_shared((128, 64), "float16")
                acc = T.alloc_tmem([128, 128], "float32")
                out = T.alloc_fragment((128, 128), "float32")
                mbar = T.alloc_barrier(1)
                T.copy(A, A_s)
                T.copy(B, B_s)
                tx = T.get_thread_binding()
                if cond(tx):
                    T.tcgen05_gemm(A_s, B_s, acc, False, True, mbar=mbar, clear_accum=True)
                T.mbarrier_wait_parity(mbar, 0)
                T.copy(acc, out)
                T.copy(out, C)
        return main

    rng = _rng()
    a, b = (rng.standard_normal((128, 64)).astype(np.float16) for _ in range(2))
    c = np.zeros((128, 128), np.float32)
    tilelang.compile(g(lambda tx: tx < 128), target=SM100A, execution_backend="emulator")(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-4)
    with pytest.raises(TileLangUnsupportedError, match="cannot be issued from inside the branch"):
        tilelang.compile(g(lambda tx: tx < 128), target=SM100A, pass_configs={"tl.disable_tma_lower": True})
    with pytest.raises(TileLangUnsupportedError, match="not a known range"):
        tilelang.compile(g(lambda tx: tx % 64 == 0), target=SM100A)


def test_tcgen05_mma_arrive_is_refused_where_it_cannot_be():
    @T.prim_func
    def main(C: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32):
            done = T.alloc_barrier(1)
            T.tcgen05_mma_arrive(done)

    with pytest.raises(TileLangUnsupportedError, match="T.tcgen05_mma_arrive needs the tcgen05 family"):
        tilelang.compile(main, target="cuda -arch=sm_90a")


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_int8_gemm_on_tcgen05_kind_i8(dtype):
    """8-bit integer T.gemm runs as tcgen05.mma kind::i8 into an int32 accumulator on sm_100a (exactly, against
    NumPy's int64 product); sm_103a, which has no kind::i8, keeps mma.sync and says why."""
    import kernels

    M, N, K = 200, 136, 192
    f = kernels.matmul_transposed(M, N, K, 128, 128, 64, trans_B=True, dtype=dtype, accum_dtype="int32",
                                  out_dtype="int32", num_stages=2)
    k = tilelang.compile(f, target=SM100A, execution_backend="emulator")
    assert any("kind::i8" in c for c in k.choices), k.choices
    rng = _rng()
    lo = 0 if dtype == "uint8" else -128
    a = rng.integers(lo, 128, (M, K)).astype(dtype)
    b = rng.integers(lo, 128, (N, K)).astype(dtype)
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c, (a.astype(np.int64) @ b.astype(np.int64).T).astype(np.int32))
    built = tilelang.compile(f, target=SM100A)
    assert "tcgen05.mma.cta_group::1.kind::i8" in built.get_ptx()
    assert re.search(r"\bUTCIMMA\b", built.get_sass()), "no tcgen05 integer MMA (UTCIMMA) in the SASS"
    if dtype == "uint8":  # mma.sync has no uint8 form here either: a clear error
        with pytest.raises(TileLangUnsupportedError, match="got A uint8"):
            tilelang.compile(f, target="cuda -arch=sm_103a")
        return
    with pytest.warns(Warning, match="sm_103a has no 8-bit integer tcgen05.mma"):
        k103 = tilelang.compile(f, target="cuda -arch=sm_103a")
    assert "tcgen05.mma" not in k103.get_ptx()


def ts_gemm(N=64, K=64, D=64, threads=128, dtype="float16", scale=0.125):
    """TileLang's mma_ts (FlashAttention's P @ V on Blackwell): S = A @ B^T into tensor memory, read into a fragment,
    P = S * scale converted to 16 bits and stored by the threads into 16-bit tensor memory (tcgen05.st of packed
    pairs), then O = P @ V with A read from tensor memory."""

    @T.prim_func
    def main(A: T.Tensor((128, K), dtype), B: T.Tensor((N, K), dtype), V: T.Tensor((N, D), dtype),
             O: T.Tensor((128, D), "float32")):
        with T.Kernel(1, threads=threads):
            A_s = T.alloc_shared((128, K), dtype)
            B_s = T.alloc_shared((N, K), dtype)
            V_s = T.alloc_shared((N, D), dtype)
            S_t = T.alloc_tmem([128, N], "float32")
            P_t = T.alloc_tmem([128, N], dtype)
            O_t = T.alloc_tmem([128, D], "float32")
            S_r = T.alloc_fragment((128, N), "float32")
            P_r = T.alloc_fragment((128, N), dtype)
            O_r = T.alloc_fragment((128, D), "float32")
            bar_s = T.alloc_barrier(1)
            bar_o = T.alloc_barrier(1)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(V, V_s)
            T.tcgen05_gemm(A_s, B_s, S_t, transpose_B=True, mbar=bar_s, clear_accum=True)
            T.mbarrier_wait_parity(bar_s, 0)
            T.copy(S_t, S_r)
            for i, j in T.Parallel(128, N):
                P_r[i, j] = S_r[i, j] * scale
            T.copy(P_r, P_t)
            T.tcgen05_gemm(P_t, V_s, O_t, mbar=bar_o, clear_accum=True)
            T.mbarrier_wait_parity(bar_o, 0)
            T.copy(O_t, O_r)
            T.copy(O_r, O)

    return main


@pytest.mark.parametrize("N,K,D,threads,dtype", [(64, 64, 64, 128, "float16"), (128, 64, 32, 256, "bfloat16")])
def test_mma_with_a_in_tensor_memory(N, K, D, threads, dtype):
    rng = _rng()
    a = rng.standard_normal((128, K)).astype(NP[dtype])
    b = rng.standard_normal((N, K)).astype(NP[dtype])
    v = rng.standard_normal((N, D)).astype(NP[dtype])
    o = np.full((128, D), np.nan, np.float32)
    k = tilelang.compile(ts_gemm(N, K, D, threads, dtype), target=SM100A, execution_backend="emulator")
    k(a, b, v, o)
    s = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)  # S: one fp32 rounding
    p = (s * np.float32(0.125)).astype(NP[dtype]).astype(np.float64)     # P: rounded to 16 bits
    ref = p @ v.astype(np.float64)
    # S's last fp32 bit depends on the summation order, which can move an element of P across a 16-bit rounding
    # boundary: one unit of P's last place times V, in a few elements
    ulp = 2.0 ** (-8 if dtype == "bfloat16" else -11)
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=2 * ulp * np.abs(p).max() * np.abs(v.astype(np.float64)).max())
    text = "\n".join(k.choices)
    assert "A in tensor memory 'P_t' (16-bit pairs)" in text and "tcgen05.st.32x32b" in text, text


def test_mma_with_a_in_tensor_memory_assembles_for_sm100a():
    k = tilelang.compile(ts_gemm(), target=SM100A)
    ptx = k.get_ptx()
    assert re.search(r"tcgen05\.mma\.cta_group::1\.kind::f16 \[%r\d+\], \[%r\d+\], %rd\d+", ptx), "no mma with A in tmem"
    assert "tcgen05.st.sync.aligned.32x32b" in ptx and "tcgen05.wait::st" in ptx
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert re.search(r"\bUTCHMMA\b", k.get_sass())


def test_sixteen_bit_tensor_memory_is_checked():
    @T.prim_func
    def odd(C: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128):
            P_t = T.alloc_tmem([128, 63], "float16")
            P_r = T.alloc_fragment((128, 63), "float16")
            T.fill(P_r, 0)
            T.copy(P_r, P_t)

    with pytest.raises(TileLangUnsupportedError, match="16-bit one with N even"):
        tilelang.compile(odd, target=SM100A)


def persistent_gemm(M, N, K, bM=128, bN=128, bK=64, stages=2, sbN=64, blocks=2, user_sync=False):
    """A persistent warp-specialised tcgen05 GEMM in the style of TileLang's gemm_tcgen5mma_ws_persistent: `blocks`
    blocks walk the tiles; warp 0 loads (TMA), warp 1 issues the MMAs into one of two accumulators of a [2, 128, bN]
    tensor memory (tile t uses matrix t % 2), warps 4-7 drain the other one in column blocks of sbN (an unrolled loop
    over C_tmem[t % 2, :, i * sbN:(i + 1) * sbN]) through shared memory (a TMA store). With user_sync the program
    places its own barriers (TL_DISABLE_THREAD_STORAGE_SYNC): named barriers of the epilogue's 128 threads."""
    tiles_n = -(-N // bN)
    tiles = -(-M // bM) * tiles_n
    k_iters = -(-K // bK)

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(blocks, threads=256) as bid:
            A_s = T.alloc_shared((stages, bM, bK), "float16")
            B_s = T.alloc_shared((stages, bK, bN), "float16")
            acc = T.alloc_tmem([2, bM, bN], "float32")
            out = T.alloc_fragment((bM, sbN), "float32")
            C_s = T.alloc_shared((bM, sbN), "float16")
            loaded = T.alloc_barrier([32] * stages)
            free = T.alloc_barrier([1] * stages)
            full = T.alloc_barrier([1] * 2)
            empty = T.alloc_barrier([128] * 2)
            tx = T.get_thread_binding()
            if tx < 32:
                for it in T.serial(T.ceildiv(tiles - bid, blocks)):
                    t = bid + it * blocks
                    for k in T.serial(k_iters):
                        p = it * k_iters + k
                        s = p % stages
                        T.mbarrier_wait_parity(free[s], ((p // stages) & 1) ^ 1)
                        T.tma_copy(A[(t // tiles_n) * bM:(t // tiles_n + 1) * bM, k * bK:(k + 1) * bK], A_s[s, :, :],
                                   barrier=loaded[s])
                        T.tma_copy(B[k * bK:(k + 1) * bK, (t % tiles_n) * bN:(t % tiles_n + 1) * bN], B_s[s, :, :],
                                   barrier=loaded[s])
                        T.mbarrier_arrive(loaded[s])
            elif tx < 64:
                for it in T.serial(T.ceildiv(tiles - bid, blocks)):
                    T.mbarrier_wait_parity(empty[it % 2], ((it // 2) & 1) ^ 1)
                    for k in T.serial(k_iters):
                        p = it * k_iters + k
                        s = p % stages
                        T.mbarrier_wait_parity(loaded[s], (p // stages) & 1)
                        T.tcgen05_gemm(A_s[s, :, :], B_s[s, :, :], acc[it % 2, :, :], mbar=free[s],
                                       clear_accum=k == 0)
                    T.tcgen05_mma_arrive(full[it % 2])
            elif 128 <= tx < 256:
                for it in T.serial(T.ceildiv(tiles - bid, blocks)):
                    t = bid + it * blocks
                    T.mbarrier_wait_parity(full[it % 2], (it // 2) & 1)
                    if user_sync:
                        T.sync_threads(1, 128)
                    for i in T.unroll(bN // sbN):
                        T.copy(acc[it % 2, :, i * sbN:(i + 1) * sbN], out)
                        T.copy(out, C_s)
                        if user_sync:
                            T.sync_threads(2, 128)
                        T.copy(C_s, C[(t // tiles_n) * bM, (t % tiles_n) * bN + i * sbN])
                        if user_sync:
                            T.sync_threads(2, 128)
                    T.mbarrier_arrive(empty[it % 2])

    return main


@pytest.mark.parametrize("user_sync", [False, True])
def test_persistent_gemm_with_double_buffered_tensor_memory(user_sync):
    """[2, 128, N] tensor memory indexed by a run-time stage, column blocks read in an unrolled loop, an epilogue
    warp group under the third branch of an elif chain (its own region and named barriers; with the program's own
    barriers, the TMA store's fence is followed by a barrier of the compiler's)."""
    rng = _rng()
    M, N, K = 256, 256, 128
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    cfg = {"tl.disable_thread_storage_sync": True} if user_sync else {}
    k = tilelang.compile(persistent_gemm(M, N, K, user_sync=user_sync), target=SM100A, execution_backend="emulator",
                         pass_configs=cfg)
    k(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    text = "\n".join(k.choices)
    assert "tensor memory: 256 columns" in text and "acc: columns [0, 256)" in text, text
    src = k.get_kernel_source()
    assert "tl::tma_store" in src and "bar.sync" in src, src


def test_tile_work_must_not_follow_a_branch_some_blocks_skip():
    @T.prim_func
    def main(A: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 64), "float16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2) as bx:
            A_s = T.alloc_shared((128, 64), "float16")
            tx = T.get_thread_binding()
            rank = T.block_rank_in_cluster()
            if rank == 0 and tx < 32:
                A_s[tx, 0] = 1.0
            else:
                T.copy(A, A_s)  # in the even block warps 0 never get here
            T.copy(A_s, C)

    with pytest.raises(TileLangUnsupportedError, match="block-uniform part"):
        tilelang.compile(main, target=SM100A)


def row_epilogue(M=128, N=128, K=64, sbN=32):
    """A tcgen05 GEMM whose epilogue works a row a thread, as TileLang's Blackwell attention and persistent GEMMs do
    (the fragment read from tensor memory holds row i on thread i): the row maximum by T.reduce_max, a row loop
    with an inner vectorized column loop subtracting it, and column windows of the fragment copied out through a
    small shared tile in an unrolled loop. Nothing goes through shared memory but the windows: the reduction is
    in-thread and the loops run where the rows are."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32"),
             R: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            C_tmem = T.alloc_tmem([M, N], "float32")
            mbar = T.alloc_barrier(1)
            C_l = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            C_s = T.alloc_shared((M, sbN), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.tcgen05_gemm(A_s, B_s, C_tmem, False, True, mbar=mbar, clear_accum=True)
            T.mbarrier_wait_parity(mbar, 0)
            T.copy(C_tmem, C_l)
            T.reduce_max(C_l, m, dim=1)
            for i in T.Parallel(M):
                for j in T.vectorized(N):
                    C_l[i, j] = C_l[i, j] - m[i]
            for w in T.unroll(N // sbN):
                T.copy(C_l[:, w * sbN:(w + 1) * sbN], C_s)
                T.copy(C_s, C[0, w * sbN])
            T.copy(m, R)

    return main


def test_a_row_a_thread_epilogue_stays_in_registers():
    rng = _rng()
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    r = np.zeros(128, np.float32)
    k = tilelang.compile(row_epilogue(), target=SM100A, execution_backend="emulator")
    k(a, b, c, r)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(r, ref.max(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, ref - ref.max(axis=1, keepdims=True), rtol=1e-5, atol=1e-4)
    text = "\n".join(k.choices)
    assert "in-thread (a thread a row)" in text, text
    assert not any("staged through shared memory" in w for w in k.warnings), k.warnings
    assert "red_smem" not in k.get_kernel_source()


def _gemm_into_tmem(M, N, K, policy=None):
    """TileLang's T.gemm with a T.alloc_tmem accumulator and no mbarrier, in a K loop (clear_accum=k == 0)."""
    kw = {} if policy is None else {"policy": policy}

    @T.prim_func
    def g(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            C_t = T.alloc_tmem([128, 128], "float32")
            C_l = T.alloc_fragment((128, 128), "float32")
            for k in T.Pipelined(T.ceildiv(K, 64), num_stages=2):
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[bx * 128, k * 64], B_s)
                T.gemm(A_s, B_s, C_t, transpose_B=True, clear_accum=k == 0, **kw)
            T.copy(C_t, C_l)
            T.copy(C_l, C[by * 128, bx * 128])

    return g


def test_gemm_into_tensor_memory_waits_for_itself():
    """Before: T.gemm with a tensor-memory C was an internal error (map::at). Expected: the tcgen05 gemm committed
    to a barrier the compiler adds and waited on, so C_t holds the product after the statement; a warp policy is
    refused (one thread issues); other targets refuse the tensor memory."""
    M, N, K = 200, 136, 192
    k = tilelang.compile(_gemm_into_tmem(M, N, K), target=SM100A, execution_backend="emulator")
    assert any("T.gemm into tensor memory 'C_t'" in c and "C_t_gemm0_bar" in c for c in k.choices), k.choices
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5 * np.sqrt(K))
    with pytest.raises(TileLangError, match="policy, k_pack and wg_wait have no meaning"):
        _gemm_into_tmem(M, N, K, policy=T.GemmWarpPolicy.FullRow)
    with pytest.raises(TileLangUnsupportedError, match="needs the tcgen05 family"):
        tilelang.compile(_gemm_into_tmem(M, N, K), target="cuda -arch=sm_90a")


def _rescale_then_overwrite(M=128, N=128, K=64, discard=True):
    """The pattern of TileLang's aws/flash_attention.py at its first step: the accumulator, which nothing has
    written yet, is read into registers, scaled by 0, written back, and then overwritten by an MMA that does not
    accumulate (clear_accum=True); with discard=False the MMA accumulates onto it instead."""

    @T.prim_func
    def g(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            C_t = T.alloc_tmem([M, N], "float32")
            C_r = T.alloc_fragment((M, N), "float32")
            mbar = T.alloc_barrier(1)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(C_t, C_r)
            for i, j in T.Parallel(M, N):
                C_r[i, j] *= 0.0
            T.copy(C_r, C_t)
            T.tcgen05_gemm(A_s, B_s, C_t, False, True, mbar=mbar, clear_accum=discard)
            T.mbarrier_wait_parity(mbar, 0)
            T.copy(C_t, C_r)
            T.copy(C_r, C)

    return g


@pytest.mark.parametrize("how", ["pass_config", "environment"])
def test_unwritten_tensor_memory_is_reported_or_reads_as_nan(how, monkeypatch):
    """Reading tensor memory nothing has written is reported (both emulators). With the uninitialized-read check
    off (the pass config emulator.check_uninit=False, or TILELANG_EMULATOR_CHECK_UNINIT=0 for programs run
    unchanged) it is not, and such memory reads as NaN: a program that discards what it read (x * 0, then an MMA
    that overwrites) gives the right numbers, one whose output depends on it gives NaN."""
    rng = np.random.default_rng(int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32))
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    checked = tilelang.compile(_rescale_then_overwrite(), target=SM100A, execution_backend="emulator")
    with pytest.raises(TileLangError, match="uninitialized") as e:
        checked(a, b, np.zeros((128, 128), np.float32))
    assert "which nothing has written" in str(e.value)
    cfg = {"emulator.check_uninit": False} if how == "pass_config" else {}
    if how == "environment":
        monkeypatch.setenv("TILELANG_EMULATOR_CHECK_UNINIT", "0")
    for discard in (True, False):
        k = tilelang.compile(_rescale_then_overwrite(discard=discard), target=SM100A, execution_backend="emulator",
                             pass_configs=cfg)
        c = np.zeros((128, 128), np.float32)
        k(a, b, c)
        if discard:
            np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
        else:
            assert np.isnan(c).all()
