"""The roller: recommended tilings for an operator on an architecture (TileLang's ``tilelang.carver.roller``).

This compiler's roller covers the GEMM (``MatmulTemplate(...).with_arch(arch).recommend_hints(topk)``,
``policy.matmul_hints``) with a cost model of its own: see ``policy.py``. TileLang's graph-level roller API
(PrimFuncNode, OutputNode, Edge, TensorCorePolicy / DefaultPolicy over arbitrary TIR) is not implemented;
those names raise a TileLangUnsupportedError that says so."""
from ...errors import TileLangUnsupportedError
from .hint import Hint, IntrinInfo  # noqa: F401
from .policy import matmul_hints  # noqa: F401
from .rasterization import NoRasterization, Rasterization, Rasterization2DColumn, Rasterization2DRow  # noqa: F401

_GRAPH_API = ("PrimFuncNode", "OutputNode", "Edge", "Node", "TensorCorePolicy", "DefaultPolicy", "TileDict",
              "Stride", "bestfit", "shape_inference", "node")


def refuse_graph_api(module, name, names):
    """The module __getattr__ of tilelang.carver and tilelang.carver.roller: TileLang's graph-roller names are
    refused with a TileLangUnsupportedError, anything else is an AttributeError."""
    if name in names:
        raise TileLangUnsupportedError(
            f"{module}.{name} (TileLang's roller over arbitrary TIR graphs) is not supported by TileLang-C++; "
            "MatmulTemplate(...).with_arch(arch).recommend_hints() gives GEMM tilings")
    raise AttributeError(f"module '{module}' has no attribute '{name}'")


def __getattr__(name):
    refuse_graph_api("tilelang.carver.roller", name, _GRAPH_API)
