"""T.* names TileLang programs use that this compiler does not implement: each raises
TileLangUnsupportedError naming the construct (never a silent no-op). What TileLang names do map onto this
compiler's IR is implemented in the module of its family; README.md, "TileLang compatibility", lists both."""
from .utils import _unsupported


def _hopper_only(name):
    def f(*args, **kwargs):
        raise _unsupported(f"T.{name}", "Hopper-specific (TMA, mbarriers, warp specialisation) and not implemented",
                           "write the kernel with T.copy / T.gemm / T.Pipelined; the compiler picks the instructions")

    f.__name__ = name
    return f


HOPPER_ONLY = ["ClusterKernel", "copy_cluster", "mma_gemm_blockscaled"]


for _n in HOPPER_ONLY:
    globals()[_n] = _hopper_only(_n)
del _n
