"""int8 T.gemm on CUDA (issue 12): A [M, K] and B [N, K] int8 in shared memory, int32 accumulators, on
mma.sync m16n8k32 s8 (ldmatrix moves the 8-bit tiles as their bytes). Checked against NumPy in int64 on
seeded random inputs with ragged sizes, in the emulator (whose m16n8k32 fragments are written from the
PTX ISA) and on the CPU target; NVRTC compiles the CUDA source."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangPerformanceWarning
from tilelang.tools.sass import find_cuobjdump


SEED = 21


def int8_gemm(M, N, K, bM=64, bN=64, bK=64, stages=2, trans_B=True, a_dtype="int8", b_dtype="int8", threads=128,
              init=0):
    @T.prim_func
    def gemm_s8(A: T.Tensor((M, K), a_dtype), B: T.Tensor((N, K) if trans_B else (K, N), b_dtype),
                C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bM, bK), a_dtype)
            B_s = T.alloc_shared((bN, bK) if trans_B else (bK, bN), b_dtype)
            C_l = T.alloc_fragment((bM, bN), "int32")
            T.fill(C_l, init)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                if trans_B:
                    T.copy(B[bx * bN, k * bK], B_s)
                else:
                    T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=trans_B)
            T.copy(C_l, C[by * bM, bx * bN])

    return gemm_s8


def _inputs(M, N, K, a_dtype="int8", b_dtype="int8"):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    lo = {"int8": -128, "uint8": 0}
    a = rng.integers(lo[a_dtype], lo[a_dtype] + 256, (M, K)).astype(a_dtype)
    b = rng.integers(lo[b_dtype], lo[b_dtype] + 256, (N, K)).astype(b_dtype)
    return a, b, a.astype(np.int64) @ b.astype(np.int64).T


@pytest.mark.parametrize("M,N,K,stages", [(128, 128, 128, 2), (100, 72, 160, 3), (64, 64, 64, 1)])
def test_int8_gemm_in_the_emulator(M, N, K, stages):
    a, b, want = _inputs(M, N, K)
    k = tilelang.compile(int8_gemm(M, N, K, stages=stages), target="cuda -arch=sm_80", execution_backend="emulator")
    assert any("mma.sync m16n8k32 s8" in c for c in k.choices), k.choices
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


def test_int8_gemm_compiles_to_s8_mma_and_runs_on_the_cpu():
    M, N, K = 96, 80, 128
    k = tilelang.compile(int8_gemm(M, N, K), target="cuda -arch=sm_80")
    ptx = k.get_ptx()
    assert re.search(r"mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32", ptx)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx and "ld.local" not in ptx
    a, b, want = _inputs(M, N, K)
    c = np.zeros((M, N), np.int32)
    tilelang.compile(int8_gemm(M, N, K), target="cpu")(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


def test_int8_gemm_with_b_as_k_by_n_is_transposed_through_shared_memory():
    """ldmatrix cannot transpose 8-bit elements: B stored [K, N] is copied into an [N, K] shared tile first
    (with a performance warning at the gemm's line), then the same mma.sync m16n8k32 s8."""
    M, N, K = 100, 80, 160  # ragged; B's [K, N] rows are whole 16-byte chunks (cp.async)
    a, b, want = _inputs(M, N, K)
    with pytest.warns(TileLangPerformanceWarning, match=r"test_int8_gemm.py:\d+: 8-bit T.gemm operand B \[K, N\]"):
        k = tilelang.compile(int8_gemm(M, N, K, trans_B=False), target="cuda -arch=sm_80", execution_backend="emulator")
    c = np.zeros((M, N), np.int32)
    k(a, np.ascontiguousarray(b.T), c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


SM90A = "cuda -arch=sm_90a"
PTX8 = {"int8": "s8", "uint8": "u8"}


@pytest.mark.parametrize("M,N,K,stages,ab,bM,bN,threads", [
    (128, 128, 128, 2, ("int8", "int8"), 64, 64, 128),
    (100, 72, 160, 3, ("uint8", "uint8"), 64, 64, 128),   # ragged
    (64, 136, 64, 1, ("int8", "int8"), 64, 64, 128),
    (200, 130, 96, 2, ("uint8", "uint8"), 128, 64, 256),  # two warp groups, ragged
])
def test_int8_gemm_uses_wgmma_on_sm90a(M, N, K, stages, ab, bM, bN, threads):
    """Before: "T.gemm uses mma.sync, not wgmma: wgmma is used for float16/bfloat16/fp8 inputs with a float32
    accumulator" (an int8 GEMM on Hopper ran mma.sync m16n8k32). Expected: wgmma.mma_async m64nNk32
    .s32.{s8,u8}.{s8,u8} from K-major shared tiles (IGMMA in the SASS), and the product equals NumPy's
    int64 one in the emulator (whose integer wgmma is written from the PTX ISA)."""
    a_dtype, b_dtype = ab
    f = int8_gemm(M, N, K, bM=bM, bN=bN, stages=stages, a_dtype=a_dtype, b_dtype=b_dtype, threads=threads)
    k = tilelang.compile(f, target=SM90A)
    name = f"{PTX8[a_dtype]}_{PTX8[b_dtype]}"
    assert any(re.search(rf"wgmma.mma_async m64n\d+k32 {name}", c) for c in k.choices), k.choices
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n\d+k32\.s32\.{PTX8[a_dtype]}\.{PTX8[b_dtype]} ",
                     k.get_ptx())
    if find_cuobjdump() is not None:
        assert "IGMMA.64x" in k.get_sass()
    a, b, want = _inputs(M, N, K, a_dtype, b_dtype)
    c = np.zeros((M, N), np.int32)
    tilelang.compile(f, target=SM90A, execution_backend="emulator")(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


def test_int8_wgmma_accumulation_wraps_at_32_bits():
    """.s32 accumulation without .satfinite wraps around (PTX ISA): an accumulator started near the int32
    maximum ends where NumPy's int32 arithmetic does, not saturated."""
    M, N, K = 64, 64, 64
    init = 2**31 - 1000
    a, b, want = _inputs(M, N, K)
    k = tilelang.compile(int8_gemm(M, N, K, init=init), target=SM90A, execution_backend="emulator")
    assert any("wgmma" in c for c in k.choices)
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    wrapped = (want + init).astype(np.int64)
    wrapped = ((wrapped + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert (want + init > 2**31 - 1).any()  # some entries do wrap
    np.testing.assert_array_equal(c, wrapped)


def test_int8_gemm_with_b_as_k_by_n_on_sm90a_goes_through_a_k_major_copy():
    """wgmma reads 8-bit operands K-major only: B stored [K, N] is copied into an [N, K] tile first, with the
    performance warning, and the result is exact."""
    M, N, K = 100, 80, 160
    a, b, want = _inputs(M, N, K)
    with pytest.warns(TileLangPerformanceWarning, match=r"8-bit T.gemm operand B \[K, N\]"):
        k = tilelang.compile(int8_gemm(M, N, K, trans_B=False), target=SM90A, execution_backend="emulator")
    assert any("wgmma.mma_async" in c for c in k.choices), k.choices
    c = np.zeros((M, N), np.int32)
    k(a, np.ascontiguousarray(b.T), c)
    np.testing.assert_array_equal(c.astype(np.int64), want)


def int8_gemm_a_in_registers(M, N, K, bM=64, bN=64, bK=64, stages=2, threads=128, dtype="int8"):
    @T.prim_func
    def gemm_rs(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bM, bK), dtype)
            B_s = T.alloc_shared((bN, bK), dtype)
            A_r = T.alloc_fragment((bM, bK), dtype)
            C_l = T.alloc_fragment((bM, bN), "int32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[bx * bN, k * bK], B_s)
                T.copy(A_s, A_r)
                T.gemm(A_r, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * bM, bx * bN])

    return gemm_rs


@pytest.mark.parametrize("M,N,K,bM,threads,dtype", [(128, 64, 128, 64, 128, "int8"), (200, 72, 96, 128, 256, "int8"),
                                                    (100, 136, 64, 64, 128, "uint8")])
def test_int8_gemm_with_a_in_registers_uses_wgmma_rs(M, N, K, bM, threads, dtype):
    """Before: "int8 wgmma with A in registers is not implemented" (mma.sync m16n8k32; the zoo's int8 GEMM at
    77 SASS per k-iteration on sm_90a against TileLang's 32.5). Expected: wgmma with A from four .b32
    registers per k32 step (the register fragment is the 16-bit one's byte split, the PTX ISA's 8-bit A
    figure), IGMMA with a register operand in the SASS, and NumPy's product in the emulator (ragged, one and
    two warp groups)."""
    f = int8_gemm_a_in_registers(M, N, K, bM=bM, threads=threads, dtype=dtype)
    k = tilelang.compile(f, target=SM90A)
    assert any("wgmma.mma_async" in c and "A in registers" in c for c in k.choices), k.choices
    s8 = PTX8[dtype]
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n\d+k32\.s32\.{s8}\.{s8} \{{[^}}]*\}}, \{{%r\d+, %r\d+, "
                     rf"%r\d+, %r\d+\}}, %rd\d+, p;", k.get_ptx())
    if find_cuobjdump() is not None:
        assert re.search(r"IGMMA\.64x\d+x32\.[SU]8\.[SU]8 R\d+, R\d+, gdesc", k.get_sass())
    a, b, want = _inputs(M, N, K, dtype, dtype)
    c = np.zeros((M, N), np.int32)
    tilelang.compile(f, target=SM90A, execution_backend="emulator")(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), want)
