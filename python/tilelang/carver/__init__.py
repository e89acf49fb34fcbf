"""tilelang.carver: the device queries TileLang programs call (`from tilelang.carver.arch import driver`;
`driver.get_num_sms()`), the architecture descriptions `CUDA(target)` / `CDNA(target)`, and the roller for
GEMMs (`tilelang.carver.template.MatmulTemplate(...).with_arch(arch).recommend_hints(topk)`, with the
rasterisation plans of `tilelang.carver.roller.rasterization`). TileLang's roller over arbitrary TIR graphs
(TensorCorePolicy, PrimFuncNode, carver.utils) is not implemented: those names raise a
TileLangUnsupportedError."""
from . import arch  # noqa: F401
from . import roller, template  # noqa: F401
from .template import MatmulTemplate  # noqa: F401

_GRAPH_API = ("utils", "TensorCorePolicy", "DefaultPolicy", "matmul_analysis", "PrimFuncNode", "OutputNode")


def __getattr__(name):
    if name in _GRAPH_API:
        from ..errors import TileLangUnsupportedError

        raise TileLangUnsupportedError(
            f"tilelang.carver.{name} (TileLang's roller over arbitrary TIR) is not supported by TileLang-C++; "
            "MatmulTemplate(...).with_arch(arch).recommend_hints() gives GEMM tilings")
    raise AttributeError(f"module 'tilelang.carver' has no attribute '{name}'")
