"""`tilelang.tvm`: the subset of TVM's Python API that TileLang programs write (`from tilelang import tvm`,
`tvm.DataType`, `tvm.tir` / `tvm.tirx` expression builders, `tvm.target.Target`, `tvm.testing`), mapped onto
this project's IR. It is not TVM: TVM's pass infrastructure, IRModule, te and arith are not here, and
naming one of them raises a TileLangUnsupportedError that says so (docs/compatibility.md lists the names).

After `import tilelang`, a bare `import tvm` / `from tvm import tirx` finds this package too, but only where
no real TVM is installed: the finder sits behind Python's own (`_alias.py`)."""
from ._names import unsupported_attr
from .datatype import DataType  # noqa: F401
from . import tir  # noqa: F401
from . import target  # noqa: F401
from . import testing  # noqa: F401
from . import ir  # noqa: F401

tirx = tir  # TileLang's TVM fork renamed tvm.tir to tvm.tirx; both spellings are the same module here

__all__ = ["DataType", "tir", "tirx", "target", "testing", "ir"]


def __getattr__(name):
    raise unsupported_attr("tvm", name)
