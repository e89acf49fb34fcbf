"""LDS bank conflicts of the HIP lowering, counted by the emulator on the accesses the lowering makes (32 banks
of 4 bytes, 128 bytes a pass), and the widths of the operand reads in the gfx90a assembly. Numerics against
NumPy float64 on seeded inputs, ragged sizes."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T

import kernels
from test_hip import NP, _rng, attention, check_code_object, f64, hip


# The 16-bit operand tiles of the two MFMA shapes: the reference GEMM's 128x128x32 tile on 2 waves (64x128 each:
# 32x32x8) and a 64x64x32 tile on 4 waves in a column (16x64 each: 16x16x16); K tiles of 32 are k-packed.
_TILES = [(128, 128, 32, 128, T.GemmWarpPolicy.Square), (64, 64, 32, 256, T.GemmWarpPolicy.FullRow)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False), (True, True)])
def test_mfma_lds_accesses_are_bank_conflict_free(dtype, trans_A, trans_B):
    """The emulator counts the LDS banks of every access the lowering makes (32 banks of 4 bytes, 128 bytes a
    pass: 32 lanes of a ds_read_u16, 8 of a ds_read_b128). The MFMA operand reads of A and B -- 16-byte reads of
    an M x K A and an N x K B, 2-byte column reads of a K x M A and a K x N B (their tiles take the k-rows
    swizzle) -- and the 16-byte copy writes take one cycle a pass, for both MFMA shapes, ragged sizes."""
    rng = _rng()
    M, N, K = 200, 136, 96
    for bm, bn, bk, threads, policy in _TILES:
        f = kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A, trans_B, dtype=dtype, out_dtype="float32",
                                      threads=threads, policy=policy)
        e = tilelang.compile(f, target="hip", execution_backend="emulator")
        a = rng.standard_normal((K, M) if trans_A else (M, K)).astype(NP[dtype])
        b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(NP[dtype])
        c = np.full((M, N), np.nan, np.float32)
        e(a, b, c)
        ref = (f64(a).T if trans_A else f64(a)) @ (f64(b).T if trans_B else f64(b))
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)
        banks = e.last_bank_conflicts
        for key in (("A_shared", "read"), ("B_shared", "read"), ("A_shared", "write"), ("B_shared", "write")):
            assert banks[key]["passes"] > 0 and banks[key]["extra_cycles"] == 0, (bm, key, banks[key])
        _no_conflicts(banks)  # and every other LDS access of the kernel


def _no_conflicts(banks, allowed=()):
    """Every LDS access of the run was counted and took one cycle a pass, but the (buffer, direction) keys in
    `allowed` (each named with the reason the hardware does not serialize it)."""
    assert banks, "no LDS access counted"
    bad = {k: v for k, v in banks.items() if v["extra_cycles"] and k not in allowed}
    assert not bad, bad


# K x N B tiles whose rows no chunk XOR separates: 16 columns (32-byte rows, rotated four to a line) and 48
# (96-byte rows padded to 128 bytes); both MFMA k steps (k-packed K = 32: rows 8 apart in a pass; K = 16:
# rows 4 apart). The 48-column tile also as a K x M A (trans_A).
@pytest.mark.parametrize("bn,bk,trans_A", [(48, 32, False), (48, 16, False), (16, 32, False), (48, 32, True)])
def test_narrow_k_rows_tiles_are_bank_conflict_free(bn, bk, trans_A):
    rng = _rng()
    M, N, K = 100, 72, 88 if bk == 32 else 40
    if trans_A:  # A is K x M with 48 columns: the M tile is 48
        M, N = 72, 136
        f = kernels.matmul_transposed(M, N, K, 48, 64, bk, True, False, dtype="float16", out_dtype="float32",
                                      threads=192, policy=T.GemmWarpPolicy.FullRow)
    else:
        f = kernels.matmul(M, N, K, 64, bn, bk, dtype="float16", out_dtype="float32")
    e = tilelang.compile(f, target="hip", execution_backend="emulator")
    a = rng.standard_normal((K, M) if trans_A else (M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, (f64(a).T if trans_A else f64(a)) @ f64(b), rtol=1e-5, atol=1e-4)
    banks = e.last_bank_conflicts
    for key in (("A_shared", "read"), ("B_shared", "read"), ("A_shared", "write"), ("B_shared", "write")):
        assert banks[key]["passes"] > 0, (key, banks)
    if bk == 16:
        # not done (docs/hip.md): the 64 x 16 M x K A of an unpacked k step is read 8 bytes a lane, rows 0..15
        # of a pass in the same half of their chunk, 2-way (its copy writes would have to swap halves too)
        assert banks[("A_shared", "read")]["max_ways"] == 2, banks
        banks = {k: v for k, v in banks.items() if k != ("A_shared", "read")}
    _no_conflicts(banks)


def test_padded_tile_lds_bytes():
    """The 48-column tile's rows take 128 bytes of LDS (a third more): the plan and the code object say so."""
    k = tilelang.compile(kernels.matmul(256, 96, 128, 64, 48, 32, dtype="float16", out_dtype="float32"), target="hip")
    res = check_code_object(k, "v_mfma_f32_16x16x16f16")
    # two stages of A (64 x 32) and B (32 rows of 64 elements: 48 used), 2 bytes each
    assert res["lds_bytes"] == 2 * 2 * (64 * 32 + 32 * 64), res
    asm = k.get_assembly()
    assert "ds_write_b128" in asm and re.search(r"ds_read_u16|ds_read_u16_d16", asm)


def test_bank_count_sees_conflicts_of_unswizzled_tiles():
    """The count is not blind: a K x N B tile 80 columns wide (160-byte rows: no chunk pattern here, so
    row-major) is read down its columns with 2-way conflicts (rows 8 apart are 1280 bytes apart, a multiple
    of 128)."""
    rng = _rng()
    M, N, K = 100, 90, 88
    e = tilelang.compile(kernels.matmul(M, N, K, 64, 80, 32, dtype="float16", out_dtype="float32"), target="hip",
                         execution_backend="emulator")
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    e(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)
    banks = e.last_bank_conflicts
    assert banks[("B_shared", "read")]["max_ways"] == 2, banks
    assert banks[("A_shared", "read")]["extra_cycles"] == 0, banks


@pytest.mark.parametrize("causal", [False, True])
def test_flashattention_lds_is_bank_conflict_free(causal):
    """FlashAttention forward (S = 128, D = 64, fp16, 32x32x8 MFMA): every LDS access is conflict-free --
    Q, K, V copies and operand reads, P staged through LDS (8-byte writes from the accumulator, 16-byte MFMA
    reads) and the O_shared epilogue (8-byte writes, 16-byte reads): both take the half-swapped chunk layout
    (rows r and r + 8 of an 8-byte pass use different halves of their chunks)."""
    rng = _rng()
    B, H, S, D = 1, 2, 128, 64
    k, e = hip(f"fa_{causal}", lambda: kernels.flashattn(B, H, S, D, causal, block_M=64, block_N=64, dtype="float16"))
    q, kk, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    e(q, kk, v, o)
    np.testing.assert_allclose(f64(o), attention(q, kk, v, causal), rtol=1e-2, atol=2e-3)
    banks = e.last_bank_conflicts
    for key in (("O_shared", "read"), ("O_shared", "write")):
        assert banks[key]["passes"] > 0, banks
    assert any(b.startswith("A_stage") and d == "write" for b, d in banks), banks
    _no_conflicts(banks)
    check_code_object(k, "v_mfma_f32_32x32x8f16")
    asm = k.get_assembly()
    assert "ds_read_b128" in asm and "ds_write_b64" in asm and "ds_write_b128" in asm


def test_half_swapped_layout_is_a_conflict_free_bijection():
    """The layout itself, every width it takes: a bijection onto the tile that keeps 16-byte chunks whole and
    aligned; the 8-byte accumulator writes (lanes 0..15: rows 0..15, the same 4 columns) and the 16-byte reads
    (8 rows of one chunk column; 8 chunks of one row) take one cycle a pass."""
    from tilelang import _ffi

    def ways(words):
        banks = {}
        for w in words:
            banks.setdefault(w % 32, set()).add(w)
        return max(len(x) for x in banks.values())

    for cols in (16, 32, 64, 128):
        rows = 32
        off = lambda r, c: _ffi.mfma_half_swap_offset(r, c, cols, 2)
        assert sorted(off(r, c) for r in range(rows) for c in range(cols)) == list(range(rows * cols))
        for r in range(rows):
            for c0 in range(0, cols, 8):
                base = off(r, c0) - off(r, c0) % 8
                assert sorted(off(r, c0 + i) for i in range(8)) == list(range(base, base + 8))
        for c0 in range(0, cols, 4):  # 8-byte writes: 16 rows, one 4-column group
            for r0 in range(0, rows, 16):
                assert ways([off(r0 + l, c0) // 2 + x for l in range(16) for x in range(2)]) == 1, (cols, c0)
        for c0 in range(0, cols, 8):  # 16-byte MFMA reads: 8 rows, one chunk column
            for r0 in range(0, rows, 8):
                assert ways([(off(r0 + l, c0) - off(r0 + l, c0) % 8) // 2 + x for l in range(8) for x in range(4)]) == 1
        # the same layout without the swap: rows r and r + 8 share the banks of an 8-byte write (2-way)
        plain = lambda r, c: _ffi.swizzled_offset(r, c, cols, 2)
        assert ways([plain(l, 0) // 2 + x for l in range(16) for x in range(2)]) == 2


@pytest.mark.parametrize("trans_A,trans_B", [(False, False), (False, True), (True, False), (True, True)])
def test_mfma_operand_reads_in_the_assembly(trans_A, trans_B):
    """gfx90a code objects of the reference tile for every transpose: no scratch, and every operand read is 16
    bytes a lane (ds_read_b128). Before, a K x M A or a K x N B was read down its columns, 2 bytes a lane
    (ds_read_u16); now the copies that fill such a tile store it k contiguous (4 x 8 blocks transposed in
    registers by byte permutes, 8-byte LDS stores: ds_write_b64), and the choice table says so."""
    bm, bn, bk, threads, policy = _TILES[0]
    f = kernels.matmul_transposed(256, 256, 64, bm, bn, bk, trans_A, trans_B, dtype="float16",
                                  out_dtype="float32", threads=threads, policy=policy)
    k = tilelang.compile(f, target="hip")
    check_code_object(k, "v_mfma_f32_32x32x8f16")
    asm = k.get_assembly()
    assert "ds_read_b128" in asm and not re.search(r"ds_read_u16|ds_read_u16_d16", asm)
    column_tiles = trans_A or not trans_B
    assert ("ds_write_b64" in asm and "v_perm_b32" in asm) == column_tiles
    for name, kind in (("A", trans_A), ("B", not trans_B)):
        assert any(f"{name}_shared: into a tile stored k contiguous" in ch for ch in k.choices) == kind, k.choices
    assert "global_store_dwordx4" in asm  # float32 C: 4 consecutive columns a lane


def _ways(words):
    banks = {}
    for w in words:
        banks.setdefault(w % 32, set()).add(w)
    return max(len(x) for x in banks.values())


# ds_read_b128 on CDNA3 serves 8 lanes a cycle, but not 8 consecutive ones: lanes 0-3 with 20-23, 4-7 with 16-19,
# 8-11 with 28-31, 12-15 with 24-27 (and the same in the upper half), as measured on MI300 (ROCm blog "LDS bank
# conflicts"; ds_write_b128 takes 8 consecutive lanes). The emulator counts 8 consecutive lanes.
_B128_READ_GROUPS = [list(range(a, a + 4)) + list(range(b, b + 4))
                     for h in (0, 32) for a, b in ((0, 20), (4, 16), (8, 28), (12, 24)) for a, b in [(a + h, b + h)]]


@pytest.mark.parametrize("R", [16, 32])
def test_mfma_16_byte_reads_under_cdna3_lane_groups(R):
    """The k-packed 16-byte operand reads (lane l: row l % R, the chunk of k = 8 (l / R)) of the chunk-swizzled
    tiles and of the half-swapped staged tiles are conflict-free under both lane groupings of ds_read_b128."""
    from tilelang import _ffi
    for cols in (32, 64, 128):
        for name, off in (("swizzled", lambda r, c: _ffi.swizzled_offset(r, c, cols, 2)),
                          ("half-swapped", lambda r, c: _ffi.mfma_half_swap_offset(r, c, cols, 2))):
            for kk in range(cols // (8 * 64 // R)):
                def words(l):
                    e = off(l % R, kk * 8 * (64 // R) + 8 * (l // R))
                    return [(e - e % 8) // 2 + x for x in range(4)]  # the aligned chunk
                for groups in (_B128_READ_GROUPS, [list(range(p, p + 8)) for p in range(0, 64, 8)]):
                    for grp in groups:
                        assert _ways([w for l in grp for w in words(l)]) == 1, (cols, name, kk, grp)


def test_column_reads_are_served_per_half_wave():
    """2-byte column reads of a 64-byte-row K x N B by 32x32 tiles (lane l: row 4 (l / 32) + v, column l % 32): the
    LDS serves a ds_read_u16 (any access of 4 bytes or less) 32 lanes a cycle -- bank conflicts are checked per
    half-wave (AMD's GCN / CDNA LDS documentation: threads 0-31 and 32-63), so only the per-half count costs cycles.
    Under the k-rows swizzle each half is conflict-free; the two halves together would be 2-way, which no
    hardware pass sees. The emulator (and test_mfma_lds_accesses_are_bank_conflict_free) counts 32-lane passes."""
    from tilelang import _ffi
    cols = 32
    for P in (4, 8):
        for v in range(P):
            def word(l):
                return _ffi.mfma_k_rows_offset(P * (l // 32) + v, l % 32, cols, 2) // 2
            assert _ways([word(l) for l in range(32)]) == 1 and _ways([word(l) for l in range(32, 64)]) == 1
            assert _ways([word(l) for l in range(64)]) <= 2


@pytest.mark.parametrize("dtype,tiles", [("float8_e4m3fn", (64, 64, 64)), ("float8_e5m2", (64, 64, 32)),
                                         ("float8_e4m3fn", (64, 128, 64))])
def test_fp8_k_rows_tiles_are_bank_conflict_free(dtype, tiles):
    """8-bit K x N B tiles (gfx940, v_mfma_f32_16x16x32 fp8/bf8) of 64 and 128 columns, ragged sizes, NumPy float64
    results. Their copies now store them k contiguous (the byte transposition is v_perm_b32), so the MFMA reads
    them 16 bytes a lane (k-packed), and every LDS access of the run is conflict-free. Before, they were read a byte at a
    time down their columns (ds_read_u8): the k-rows chunk flip that kept those reads (rows 8 apart in a 32-lane
    pass, 16 apart k-packed) conflict-free, still used where a copy cannot transpose, is checked on the offsets."""
    from test_hip import _fp8
    rng = _rng()
    M, N, K = 100, 144, 96
    f = kernels.matmul(M, N, K, *tiles, dtype=dtype, out_dtype="float32")
    e = tilelang.compile(f, target="hip -arch=gfx940", execution_backend="emulator")
    a, b = _fp8(rng, (M, K), dtype), _fp8(rng, (K, N), dtype)
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    ref = f64(a) @ f64(b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    banks = e.last_bank_conflicts
    assert banks[("B_shared", "read")]["passes"] > 0, banks
    if tiles[2] == 32:
        # not done (docs/hip.md): a 32-byte-row M x K A read 8 bytes a lane (unpacked k step), 2-way
        assert banks[("A_shared", "read")]["max_ways"] == 2, banks
        banks = {k: v for k, v in banks.items() if k != ("A_shared", "read")}
    _no_conflicts(banks)
    # row-major, the same reads would be 2-way: rows 8 (16) apart of 64- or 128-byte rows share their banks
    from tilelang import _ffi
    cols = tiles[1]
    for P in (8, 16):
        def word(l, off):
            return off(P * (l // 16), l % 16) // 4
        assert _ways([word(l, lambda r, c: r * cols + c) for l in range(32)]) == 2
        assert _ways([word(l, lambda r, c: _ffi.mfma_k_rows_offset(r, c, cols, 1)) for l in range(32)]) == 1
    if tiles == (64, 64, 64):
        k = tilelang.compile(f, target="hip -arch=gfx940")
        check_code_object(k, "v_mfma_f32_16x16x32_fp8_fp8", arch="gfx940")
        asm = k.get_assembly()
        assert "ds_read_u8" not in asm and "ds_read_b128" in asm and "v_perm_b32" in asm and "ds_write_b128" in asm


def test_k_rows_layouts_are_bijections_of_whole_chunks():
    """MfmaKRowsOffset on every width it changes: a bijection onto the tile's LDS rows (48 columns: onto rows of 64,
    the padding unused by construction), 16-byte chunks whole and aligned."""
    from tilelang import _ffi
    for cols, eb in ((16, 2), (32, 2), (48, 2), (64, 2), (128, 2), (64, 1), (128, 1)):
        rows, epc, stride = 64, 16 // eb, 64 if (cols, eb) == (48, 2) else cols
        offs = [_ffi.mfma_k_rows_offset(r, c, cols, eb) for r in range(rows) for c in range(cols)]
        assert len(set(offs)) == len(offs) and min(offs) >= 0 and max(offs) < rows * stride, cols
        for r in range(rows):
            for c0 in range(0, cols, epc):
                o = [_ffi.mfma_k_rows_offset(r, c0 + i, cols, eb) for i in range(epc)]
                assert o == list(range(o[0], o[0] + epc)) and o[0] % epc == 0, (cols, eb, r, c0)


@pytest.mark.parametrize("name", ["rmsnorm", "softmax", "splitk"])
def test_the_other_reference_kernels_touch_lds_without_conflicts(name):
    """RMSNorm reads its LDS row tile into registers a 16-byte chunk a lane (one ds_read_b128, not four
    ds_read_b32 that a chunk-swizzled tile serves 4-way conflicted); softmax's and split-K's LDS traffic is
    conflict-free too (the configurations of test_hip.py, ragged). Results against NumPy in float64."""
    rng = _rng()
    if name == "splitk":
        M, N, K = 72, 64, 256
        k, e = hip("splitk", lambda: kernels.matmul_splitk(M, N, K, 64, 64, 32, split_k=4, dtype="float16"))
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        c = np.zeros((M, N), np.float32)
        e(a, b, c)
        np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)
    else:
        M, N = 70, 128  # 70 rows: the last block is partial
        x = rng.standard_normal((M, N)).astype(np.float32)
        y = np.zeros_like(x)
        if name == "rmsnorm":
            k, e = hip("lds_rmsnorm", lambda: kernels.rms_norm(M, N, 8))
            e(x, y)
            want = f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12)
        else:
            k, e = hip("softmax", lambda: kernels.softmax(M, N, 8))
            e(x, y)
            want = np.exp(f64(x) - f64(x).max(1, keepdims=True))
            want /= want.sum(1, keepdims=True)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    _no_conflicts(e.last_bank_conflicts)
    check_code_object(k)
    if name == "rmsnorm":
        assert any("4-wide vector loads into A_local" in c for c in k.choices), k.choices
        assert "ds_read_b128" in k.get_assembly()


def test_cuda_reads_a_shared_row_tile_into_registers_16_bytes_at_a_time():
    """The same RMSNorm on CUDA: ld.shared.v4 and no bank conflicts in the emulator (were 4-way)."""
    rng = _rng()
    x = rng.standard_normal((64, 512)).astype(np.float32)
    y = np.zeros_like(x)
    e = tilelang.compile(kernels.rms_norm(64, 512, 4), target="cuda -arch=sm_80", execution_backend="emulator")
    e(x, y)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5,
                               atol=1e-6)
    assert e.last_bank_conflicts[("A_shared", "read")]["extra_cycles"] == 0, e.last_bank_conflicts
    assert "ld.shared.v4.f32" in tilelang.compile(kernels.rms_norm(64, 512, 4), target="cuda -arch=sm_80").get_ptx()


def test_the_backend_keeps_lane_arrays_out_of_lds():
    """A reduction's per-lane partials (a 128-element register array per lane in this softmax) are not moved to
    LDS by the AMDGPU backend (-mllvm -disable-promote-alloca-to-lds): the code object's LDS is the planned
    table's (it was 2080 bytes for a 32-byte plan), and no scratch takes their place."""
    k = tilelang.compile(kernels.softmax(64, 512, 4), target="hip")
    res = check_code_object(k)  # lds_bytes == the planned shared bytes, no scratch, no spills
    assert res["lds_bytes"] == 32, res


# Operand tiles read down their columns (a K x N B, a K x M A) stored k contiguous by their copies: rows of 32,
# 64, 128 and 256 bytes (the shorter ones share a 128-byte line two or four to a line), 16- and 8-bit elements,
# both MFMA shapes, CDNA3 and CDNA4.
@pytest.mark.parametrize("arch,dtype,tiles,threads,trans_A", [
    ("gfx950", "float16", (128, 128, 64), 256, False),
    ("gfx950", "bfloat16", (128, 128, 32), 256, True),
    ("gfx90a", "float16", (64, 64, 16), 64, False),
    ("gfx942", "float16", (64, 64, 128), 128, False),
    ("gfx950", "float8_e4m3fn", (128, 128, 128), 256, False),
    ("gfx950", "float8_e5m2", (64, 64, 64), 128, True),
])
def test_k_transposed_operand_tiles(arch, dtype, tiles, threads, trans_A):
    """Each copy into the tile loads q rows of c columns a thread (c-element global loads), transposes the block in
    registers (v_perm_b32) and stores c columns of q k (q-element LDS stores); the MFMA then reads a lane's k
    values as one vector, never a column element by element (ds_read_u16 / ds_read_u8 before). The emulator runs
    ragged sizes (partial tiles in M, N and K) against NumPy float64, and counts every LDS access of the run:
    the copies' stores (rows c apart in a pass: row n is placed at n ^ ((n / c) % L) where L rows share a line)
    and the MFMA's reads take one cycle a pass. The code object spills nothing."""
    from test_hip import _fp8
    rng = _rng()
    bm, bn, bk = tiles
    M, N, K = 208, 144, bk * 2 + bk // 2  # (rows of 16-byte multiples: the copies' chunks stay aligned)
    f = kernels.matmul_transposed(M, N, K, bm, bn, bk, trans_A, False, dtype=dtype, out_dtype="float32",
                                  threads=threads)
    target = f"hip -arch={arch}"
    k = tilelang.compile(f, target=target)
    check_code_object(k, arch=arch)
    for name, kind in (("A", trans_A), ("B", True)):
        assert any(f"{name}_shared: into a tile stored k contiguous" in ch for ch in k.choices) == kind, k.choices
    asm = k.get_assembly()
    assert not re.search(r"ds_read_u16|ds_read_u8|ds_read_i8", asm) and "v_perm_b32" in asm
    fp8 = dtype.startswith("float8")
    a_shape = (K, M) if trans_A else (M, K)
    if fp8:
        a, b = _fp8(rng, a_shape, dtype), _fp8(rng, (K, N), dtype)
    else:
        a, b = (rng.standard_normal(a_shape).astype(NP[dtype]), rng.standard_normal((K, N)).astype(NP[dtype]))
    e = tilelang.compile(f, target=target, execution_backend="emulator")
    c = np.full((M, N), np.nan, np.float32)
    e(a, b, c)
    ref = (f64(a).T if trans_A else f64(a)) @ f64(b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    banks = e.last_bank_conflicts
    for key in (("B_shared", "read"), ("B_shared", "write")) + ((("A_shared", "write"),) if trans_A else ()):
        assert banks[key]["passes"] > 0, (key, banks)
    _no_conflicts(banks)
