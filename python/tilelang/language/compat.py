"""T.* names TileLang programs use that this compiler does not implement: each raises
TileLangUnsupportedError naming the construct (never a silent no-op). What TileLang names do map onto this
compiler's IR is implemented in the module of its family; README.md, "TileLang compatibility", lists both."""
from .utils import _unsupported


_NOT_YET: dict = {}  # name -> why; empty now (the last, T.tcgen05_gemm_blockscaled, is implemented)


def _not_yet(name):
    def f(*args, **kwargs):
        raise _unsupported(f"T.{name}", _NOT_YET[name],
                           "write the kernel with T.Kernel / T.copy / T.gemm; docs/blackwell.md says what exists")

    f.__name__ = name
    f._tl_unsupported = True  # scripts/tilelang_census.py counts it as refused, not present
    return f


globals().update({name: _not_yet(name) for name in _NOT_YET})
