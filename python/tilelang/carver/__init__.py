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
    roller.refuse_graph_api("tilelang.carver", name, _GRAPH_API)
