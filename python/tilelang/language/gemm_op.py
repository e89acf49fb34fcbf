"""Matrix multiplication of tiles: T.gemm, T.wgmma_gemm (sm_90a) and T.wait_wgmma."""
import enum

from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from .ast import region_of
from .expr import Expr
from .expr import const as _const
from .utils import _bool, _int_arg, _region


class GemmWarpPolicy(enum.IntEnum):
    Square = 0
    FullRow = 1
    FullCol = 2


def gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False, k_pack=1,
         wg_wait=0, _require_wgmma=False):
    wg_wait = _int_arg(wg_wait, "T.gemm wg_wait")
    ra = region_of(A, "T.gemm operand A")
    rb = region_of(B, "T.gemm operand B")
    rc = region_of(C, "T.gemm operand C")
    for (buf, _, _, point), nm in zip((ra, rb, rc), "ABC"):
        if point:
            raise TileLangTypeError(f"T.gemm operand {nm} must be a tile, not a single element of '{buf.name}'")
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
    if not runtime_clear:
        return g
    zero = _const(0.0 if "float" in rc[0].dtype else 0, rc[0].dtype)
    cleared = _ffi.tile_op("fill", [_region(*rc[:3])], [zero], {}, builder.span())
    return _ffi.seq([_ffi.if_(clear_accum, cleared, None, builder.span()), g], builder.span())


def wgmma_gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square, clear_accum=False,
               k_pack=1, wg_wait=0):
    """T.gemm that must run on wgmma (sm_90a): a compile error, not a fallback, when it cannot."""
    return gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack, wg_wait, _require_wgmma=True)


def wait_wgmma(n=0):
    """Waits until at most n of the warp group's committed wgmma groups are pending (after
    T.gemm(..., wg_wait=-1)); nothing on targets whose gemm is synchronous."""
    return _ffi.tile_op("wait_wgmma", [], [], {"n": _int_arg(n, "T.wait_wgmma(n)")}, builder.span())
