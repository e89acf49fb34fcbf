"""Matrix multiplication of tiles: T.gemm, T.wgmma_gemm (sm_90a) and T.wait_wgmma."""
import enum

from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from .ast import region_of
from .expr import Expr
from .expr import const as _const
from .utils import _bool, _int_arg, _region, _unsupported


class GemmWarpPolicy(enum.IntEnum):
    Square = 0
    FullRow = 1
    FullCol = 2


def gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False, k_pack=1,
         wg_wait=0, _require_wgmma=False, annotations=None):
    if annotations:
        from .ws_schedule import with_ws_id
        return with_ws_id(gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait, _require_wgmma),
                          annotations, "T.gemm")
    wg_wait = _int_arg(wg_wait, "T.gemm wg_wait")
    ra = region_of(A, "T.gemm operand A")
    rb = region_of(B, "T.gemm operand B")
    rc = region_of(C, "T.gemm operand C")
    for (buf, _, _, point), nm in zip((ra, rb, rc), "ABC"):
        if point:
            raise TileLangTypeError(f"T.gemm operand {nm} must be a tile, not a single element of '{buf.name}'")
    if rc[0].scope == "shared.tmem":
        return _gemm_into_tmem(ra, rb, rc, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait)
    ra, rb, pre = _common_operand_dtype(ra, rb)
    # clear_accum given as a kernel expression (TileLang's FlashMLA: clear_accum=(j == 0)): C is cleared
    # where it holds and the gemm accumulates, which is the same product
    runtime_clear = isinstance(clear_accum, Expr) and _ffi.const_int(clear_accum) is None
    if runtime_clear and clear_accum.dtype != "bool":
        raise TileLangTypeError(f"T.gemm clear_accum must be a bool or a boolean kernel expression, got "
                                f"`{_ffi.print_expr(clear_accum)}` of type {clear_accum.dtype}")
    clear = False if runtime_clear else _bool(clear_accum)
    g = _ffi.tile_op("gemm", [_region(*ra[:3]), _region(*rb[:3]), _region(*rc[:3])], [],
                     {"transpose_A": int(_bool(transpose_A)), "transpose_B": int(_bool(transpose_B)),
                      "policy": int(policy), "clear_accum": int(clear), "k_pack": int(k_pack),
                      "wg_wait": int(wg_wait), "require_wgmma": int(_require_wgmma)},
                     builder.span())
    if runtime_clear:
        zero = _const(0.0 if "float" in rc[0].dtype else 0, rc[0].dtype)
        cleared = _ffi.tile_op("fill", [_region(*rc[:3])], [zero], {}, builder.span())
        g = _ffi.seq([_ffi.if_(clear_accum, cleared, None, builder.span()), g], builder.span())
    return _ffi.seq(pre + [g], builder.span()) if pre else g


def _gemm_into_tmem(ra, rb, rc, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait):
    """T.gemm with a T.alloc_tmem accumulator (TileLang's Blackwell form without an mbarrier): the tcgen05 gemm,
    which the compiler waits for (a barrier of its own: the product is in C when the statement ends)."""
    if int(policy) != int(GemmWarpPolicy.Square) or int(k_pack) != 1 or int(wg_wait) != 0:
        raise TileLangTypeError("T.gemm into tensor memory: one thread issues the whole tile (tcgen05.mma), so "
                                "policy, k_pack and wg_wait have no meaning here; leave them at their defaults")
    return _ffi.tile_op("tcgen05_gemm", [_region(*ra[:3]), _region(*rb[:3]), _region(*rc[:3])],
                        [_clear_expr("gemm", clear_accum)],
                        {"transpose_A": int(_bool(transpose_A)), "transpose_B": int(_bool(transpose_B)),
                         "has_mbar": 0, "use_2cta": 0, "wait": 1}, builder.span())


# Mixed-input gemms (TileLang accepts e.g. float16 A with float32 B): each operand whose dtype differs from the
# common one is converted, exactly, into a tile of that dtype before the gemm (a T.copy on every call, so a
# TileLangPerformanceWarning says so). The common dtype is the wider float; an integer operand of at most 8 bits
# converts exactly into a float16/bfloat16/float32 partner; float16 with bfloat16 (neither holds the other)
# meet in float32. fp8 operands mix freely (the instructions take e4m3/e5m2 independently).
_FLOAT_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


def _common_dtype(a, b):
    fp8 = ("float8_e4m3fn", "float8_e5m2")
    # 4-bit integer operands (int4 / uint4 tensors hold one value per byte here, docs/semantics.md) are widened
    # to int8, exactly, and multiplied on the int8 path (mma.sync m16n8k32 s8 on CUDA, not m16n8k64 s4, which
    # reads packed nibbles).
    four = ("int4", "uint4")
    if (a in four or b in four) and a in four + ("int8",) and b in four + ("int8",):
        return "int8"
    if a == b or (a in fp8 and b in fp8):
        return None
    small_int = ("int8", "uint8", "int4", "uint4")
    if a in _FLOAT_BITS and b in _FLOAT_BITS:
        if _FLOAT_BITS[a] == _FLOAT_BITS[b]:
            return "float32"
        return a if _FLOAT_BITS[a] > _FLOAT_BITS[b] else b
    if a in _FLOAT_BITS and (b in fp8 or b in small_int):
        return a
    if b in _FLOAT_BITS and (a in fp8 or a in small_int):
        return b
    raise TileLangTypeError(f"T.gemm operands of dtypes {a} and {b} have no common dtype to compute in; convert "
                            "one into a tile of the other's dtype first (T.copy into a tile of that dtype)")


def _common_operand_dtype(ra, rb):
    import warnings

    from ..errors import TileLangPerformanceWarning
    from .allocate import alloc_fragment, alloc_shared

    common = _common_dtype(ra[0].dtype, rb[0].dtype)
    if common is None:
        return ra, rb, []
    pre, converted = [], []
    out = []
    for r, nm in ((ra, "A"), (rb, "B")):
        buf, mins, exts = r[:3]
        if buf.dtype == common:
            out.append(r)
            continue
        if buf.scope not in ("shared", "local.fragment"):
            raise TileLangTypeError(f"T.gemm operand {nm} '{buf.name}' ({buf.dtype}) must be a shared tile or a "
                                    f"fragment to be converted to {common}")
        shape = [_ffi.const_int(e) for e in exts]
        if any(e is None for e in shape):
            raise TileLangTypeError(f"T.gemm operand {nm} '{buf.name}' has a run-time extent")
        alloc = alloc_shared if buf.scope == "shared" else alloc_fragment
        ctx = builder.current()
        saved, ctx.pending_name = ctx.pending_name, f"{buf.name}_{common}"
        try:
            tile = alloc(shape, common)
        finally:
            ctx.pending_name = saved
        whole = ([_const(0) for _ in shape], [_const(e) for e in shape])
        pre.append(_ffi.tile_op("copy", [_region(buf, mins, exts), _region(tile, *whole)], [], {}, builder.span()))
        out.append((tile, whole[0], whole[1], False))
        converted.append(f"{nm} '{buf.name}' ({buf.dtype})")
    sp = builder.span()
    loc = _ffi.format_span(sp).partition("\n")[0] + ": " if sp else ""
    if ra[0].dtype == rb[0].dtype:  # int4 x int4
        msg = (f"{loc}T.gemm on {ra[0].dtype} operands: {' and '.join(converted)} are converted into {common} tiles "
               f"before every gemm and multiplied as {common} (the 4-bit mma reads packed nibbles; {ra[0].dtype} "
               f"tensors here hold one value per byte)")
    else:
        msg = (f"{loc}T.gemm operands differ in dtype ({ra[0].dtype} and {rb[0].dtype}): {' and '.join(converted)} "
               f"{'is' if len(converted) == 1 else 'are'} converted into a {common} tile before every gemm; keep "
               f"both operands in one dtype for full speed")
    if sp:
        warnings.warn_explicit(msg, TileLangPerformanceWarning, sp[0], sp[1])
    else:
        warnings.warn(msg, TileLangPerformanceWarning)
    return out[0], out[1], pre


def wgmma_gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False,
               k_pack=1, wg_wait=0):
    """T.gemm that must run on wgmma (sm_90a): a compile error, not a fallback, when it cannot."""
    return gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait, _require_wgmma=True)


def _tile_regions(fn, operands):
    """The regions of a gemm's tile operands ((value, name) pairs); a single element is refused."""
    regs = []
    for x, nm in operands:
        r = region_of(x, f"T.{fn} operand {nm}")
        if r[3]:
            raise TileLangTypeError(f"T.{fn} operand {nm} must be a tile, not a single element of '{r[0].name}'")
        regs.append(_region(*r[:3]))
    return regs


def _clear_expr(fn, clear_accum):
    """clear_accum as a bool kernel expression (a Python bool, or a boolean expression such as k == 0)."""
    if isinstance(clear_accum, Expr):
        if clear_accum.dtype != "bool":
            raise TileLangTypeError(f"T.{fn} clear_accum must be a bool or a boolean kernel expression, got "
                                    f"`{_ffi.print_expr(clear_accum)}` of type {clear_accum.dtype}")
        return clear_accum
    return _const(bool(_bool(clear_accum)), "bool")


def _mbar_expr(mbar):
    """An mbarrier operand: the buffer's first element, or the element given."""
    return _ffi.load(mbar, [_const(0)]) if isinstance(mbar, _ffi.Buffer) else mbar


def tcgen05_gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False, *,
                 mbar=None, use_2cta=False, annotations=None):
    """TileLang's explicit Blackwell gemm (the tcgen05 family: sm_100a / sm_103a / sm_110a): C, a [128, N] float32
    T.alloc_tmem accumulator, = A @ B (+ C unless clear_accum), A and B float16 / bfloat16 shared tiles. One thread
    issues tcgen05.mma; the call does not wait. With `mbar` (an mbarrier from T.alloc_barrier, or one of its
    elements) the MMAs' completion arrives on it once (T.mbarrier_wait_parity waits); without, a later
    T.tcgen05_gemm's arrival covers this one too. Read C with T.copy(C, fragment). Other targets refuse it.

    use_2cta=True (cta_group::2, in a T.ClusterKernel of an even number of blocks): the blocks of a CTA pair (ranks
    2i, 2i + 1) compute one 256 x N tile together. Each holds its 128 rows of A and N / 2 columns of B (B is
    [K, N / 2], or [N / 2, K] transposed) at the same shared offsets, and its 128 rows of C in its own tensor
    memory; the pair's even block issues (the odd block skips the call), and `mbar` receives one arrival in
    both blocks when the MMAs complete."""
    if annotations:
        raise _unsupported("T.tcgen05_gemm(annotations=...)", "annotations of tcgen05 gemms are not implemented")
    if int(policy) != int(GemmWarpPolicy.Square):
        raise TileLangTypeError("T.tcgen05_gemm: one thread issues the whole tile, so a warp policy has no meaning "
                                "here; leave policy at its default")
    regs = _tile_regions("tcgen05_gemm", ((A, "A"), (B, "B"), (C, "C")))
    exprs = [_clear_expr("tcgen05_gemm", clear_accum)]
    if mbar is not None:
        exprs.append(_mbar_expr(mbar))
    return _ffi.tile_op("tcgen05_gemm", regs, exprs,
                        {"transpose_A": int(_bool(transpose_A)), "transpose_B": int(_bool(transpose_B)),
                         "has_mbar": int(mbar is not None), "use_2cta": int(_bool(use_2cta))}, builder.span())


def tcgen05_gemm_blockscaled(A, B, C, SFA_tmem, SFB_tmem, transpose_A=False, transpose_B=False, clear_accum=False,
                             wg_wait=0, mbar=None, *, k_start, sf_a_granularity_k, sf_b_granularity_k,
                             use_2cta=False):
    """TileLang's explicit block-scaled Blackwell gemm (the tcgen05 family): T.tcgen05_gemm with MXFP8 operands
    (float8_e4m3fn / float8_e5m2 shared tiles, tcgen05.mma kind::mxf8f6f4.block_scale) whose every
    `sf_*_granularity_k` K elements of a row of A (a column of B) are scaled by one E8M0 value (2^(e - 127)).
    SFA_tmem / SFB_tmem are uint32 tensor memory written by T.tcgen05_cp_warpx4: word (row % 32, column row / 32)
    packs the scales of four consecutive K groups, byte i for group 4 g + i. `k_start` (the tile's first K index,
    a kernel expression) selects the byte for each k32 step: ((k_start + 32 s) / granularity) % 4. The rest is
    T.tcgen05_gemm's: one thread issues, `mbar` receives the completion, use_2cta for a CTA pair."""
    if int(wg_wait) != 0:
        raise TileLangTypeError("T.tcgen05_gemm_blockscaled: wg_wait has no meaning for tcgen05 (completion arrives "
                                "on mbar); leave it at 0")
    regs = _tile_regions("tcgen05_gemm_blockscaled", ((A, "A"), (B, "B"), (C, "C"), (SFA_tmem, "SFA_tmem"),
                                                       (SFB_tmem, "SFB_tmem")))
    if not isinstance(k_start, Expr):
        k_start = _const(_int_arg(k_start, "T.tcgen05_gemm_blockscaled k_start"))
    exprs = [_clear_expr("tcgen05_gemm_blockscaled", clear_accum), k_start]
    if mbar is not None:
        exprs.append(_mbar_expr(mbar))
    return _ffi.tile_op(
        "tcgen05_gemm_blockscaled", regs, exprs,
        {"transpose_A": int(_bool(transpose_A)), "transpose_B": int(_bool(transpose_B)),
         "has_mbar": int(mbar is not None), "use_2cta": int(_bool(use_2cta)),
         "sf_a_granularity_k": _int_arg(sf_a_granularity_k, "T.tcgen05_gemm_blockscaled sf_a_granularity_k"),
         "sf_b_granularity_k": _int_arg(sf_b_granularity_k, "T.tcgen05_gemm_blockscaled sf_b_granularity_k")},
        builder.span())


def tcgen05_cp_warpx4(smem_src, tmem_dst, tmem_col_offset=0, *, use_2cta=False):
    """TileLang's scale-factor copy (the tcgen05 family): tcgen05.cp.32x128b.warpx4, issued by one thread. Each 128
    uint32 words of the shared tile `smem_src` (after T.tcgen05_sf_warp_transpose: word 4 r + c holds row 32 c + r)
    land in 4 columns of the uint32 tensor memory `tmem_dst` from column `tmem_col_offset` + 4 i on, row r of the
    chunk in lanes r, r + 32, r + 64 and r + 96. use_2cta: by the pair's even block, each block of the pair copies
    its own shared tile into its own tensor memory (cta_group::2)."""
    rs = region_of(smem_src, "T.tcgen05_cp_warpx4 source")
    rd = region_of(tmem_dst, "T.tcgen05_cp_warpx4 destination")
    if not isinstance(tmem_col_offset, Expr):
        tmem_col_offset = _const(_int_arg(tmem_col_offset, "T.tcgen05_cp_warpx4 tmem_col_offset"))
    return _ffi.tile_op("tcgen05_cp_warpx4", [_region(*rs[:3]), _region(*rd[:3])], [tmem_col_offset],
                        {"use_2cta": int(_bool(use_2cta))}, builder.span())


def tcgen05_sf_warp_transpose(smem_src):
    """TileLang's scale-factor transpose for T.tcgen05_cp_warpx4, by one warp: in each 128-word chunk of the uint32
    shared tile, word 32 c + r moves to word 4 r + c (c < 4, r < 32), in place."""
    rs = region_of(smem_src, "T.tcgen05_sf_warp_transpose operand")
    return _ffi.tile_op("tcgen05_sf_warp_transpose", [_region(*rs[:3])], [], {}, builder.span())


def tcgen05_mma_arrive(mbar, arrive_2cta=False):
    """TileLang's commit of tcgen05 MMAs (the tcgen05 family): the thread that issues single-thread work here (the
    first of an `if tx ...` branch's threads, as for T.tcgen05_gemm) commits its earlier tcgen05.mma to `mbar`,
    which receives one arrival when they have completed (T.mbarrier_wait_parity(mbar, phase) waits for it).
    arrive_2cta=True commits 2-CTA MMAs (T.tcgen05_gemm(..., use_2cta=True)): by the pair's even block, one
    arrival on `mbar` in each block of the pair."""
    return _ffi.tile_op("tcgen05_mma_arrive", [], [_mbar_expr(mbar)], {"arrive_2cta": int(_bool(arrive_2cta))}, builder.span())


def mma_gemm_blockscaled(A, B, C, SFA, SFB, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square,
                         clear_accum=False, *, k_start, sf_a_granularity_k, sf_b_granularity_k, sf_layout=None):
    """TileLang's block-scaled gemm: C (+)= (A * sa) @ (B * sb), A and B float8_e4m3fn / float8_e5m2 /
    float6 / float4_e2m1fn tiles (MXFP8 / MXFP6 / MXFP4), C a float32 fragment, every `sf_a_granularity_k`
    consecutive K elements of a row of A scaled by one E8M0 value of SFA (uint8 or float8_e8m0fnu, 2^(s - 127); 255
    is NaN), and B's columns by SFB the same way. SFA is [rows of A, scale groups]: the tile's own K / g groups (then column j
    scales tile-local k in [j g, (j + 1) g)), or the groups of all of K (then column (k_start + k) / g).
    `k_start` is the tile's first K index.
    uint32 SFA and SFB are NVFP4 (TileLang's SM120 forms): float4_e2m1fn A and B, one UE4M3 scale per 16
    elements (granularity 16), four a uint32 word, [rows, K / 64] word tiles, row-major (sf_layout None /
    'rowmajor') or, with sf_layout="blockscaled_chunk_kmajor", stored K-major in chunks of 32 rows
    (src/op/gemm_blockscaled.h).
    Lowered on hip -arch=gfx950 (the scaled MFMAs v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4), on
    cuda -arch=sm_120a / sm_121a (NVFP4: mma.sync m16n8k64 kind::mxf4nvf4 block_scale scale_vec::4X; MXFP4: m16n8k64
    kind::mxf4 scale_vec::2X; MXFP8 / MXFP6 and mixes: m16n8k32 kind::mxf8f6f4 scale_vec::1X) and on the CPU; other
    targets say it has no lowering (docs/hip.md, docs/blackwell.md)."""
    layouts = {None: 0, "rowmajor": 0, "blockscaled_chunk_kmajor": 1}
    if sf_layout not in layouts:
        raise _unsupported(f"T.mma_gemm_blockscaled(sf_layout={sf_layout!r})",
                           "the scale layouts are None / 'rowmajor' (uint8 E8M0 tiles) and "
                           "'blockscaled_chunk_kmajor' (uint32 words of UE4M3 scales, NVFP4)",
                           "pass one of those")
    regs = _tile_regions("mma_gemm_blockscaled", ((A, "A"), (B, "B"), (C, "C"), (SFA, "SFA"), (SFB, "SFB")))
    if not isinstance(k_start, Expr):
        k_start = _const(_int_arg(k_start, "T.mma_gemm_blockscaled k_start"))
    return _ffi.tile_op("gemm_blockscaled", regs, [k_start],
                        {"transpose_A": int(_bool(transpose_A)), "transpose_B": int(_bool(transpose_B)),
                         "policy": int(policy), "clear_accum": int(_bool(clear_accum)),
                         "sf_a_granularity_k": _int_arg(sf_a_granularity_k, "T.mma_gemm_blockscaled sf_a_granularity_k"),
                         "sf_b_granularity_k": _int_arg(sf_b_granularity_k, "T.mma_gemm_blockscaled sf_b_granularity_k"),
                         "sf_layout": layouts[sf_layout]},
                        builder.span())


def wait_wgmma(n=0):
    """Waits until at most n of the warp group's committed wgmma groups are pending (after
    T.gemm(..., wg_wait=-1)); nothing on targets whose gemm is synchronous."""
    return _ffi.tile_op("wait_wgmma", [], [], {"n": _int_arg(n, "T.wait_wgmma(n)")}, builder.span())


class BlockScaledAccumulatorLayout:
    """What T.make_blockscaled_gemm_layout returns: the tcgen05 store layout of a tensor-memory accumulator
    [M, N] (row m in lane m, column n in 32-bit column n of the allocation; M = 64: layout F), for
    T.annotate_layout({C_tmem: layout})."""

    def __init__(self, name, shape):
        self.name, self.shape = name, tuple(shape)

    def __repr__(self):
        return f"BlockScaledAccumulatorLayout({self.name!r}, {self.shape})"


def make_blockscaled_gemm_layout(C, A, transpose_A=False):
    """TileLang's layout of a block-scaled tcgen05 gemm's accumulator C (a T.alloc_tmem [M, N] buffer), given its A
    operand (K and dtype), for T.annotate_layout({C: layout}) before C is read with T.copy. Here every tcgen05
    accumulator is placed as the MMA stores it (docs/blackwell.md), so the annotation checks that the layout was
    made for that buffer and changes nothing."""
    C = region_of(C, "T.make_blockscaled_gemm_layout C")[0]
    A = region_of(A, "T.make_blockscaled_gemm_layout A")[0]
    if C.scope != "shared.tmem":
        raise TileLangTypeError(f"T.make_blockscaled_gemm_layout: C '{C.name}' must be a tensor-memory accumulator "
                                f"(T.alloc_tmem), not a {C.scope} buffer")
    shape = [_ffi.const_int(d) for d in C.shape]
    if len(shape) != 2 or any(d is None for d in shape):
        raise TileLangTypeError(f"T.make_blockscaled_gemm_layout: C '{C.name}' must be a constant [M, N] tile")
    ok = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn")
    if str(A.dtype) not in ok:
        raise TileLangTypeError(f"T.make_blockscaled_gemm_layout: A '{A.name}' is {A.dtype}; a block-scaled gemm's "
                                f"operands are {' / '.join(ok)}")
    _bool(transpose_A)
    return BlockScaledAccumulatorLayout(C.name, shape)
