"""The error for a TVM name that `tilelang.tvm` does not map."""
from ..errors import TileLangUnsupportedError

_WHY = {
    "transform": "TVM's pass infrastructure; this compiler's passes run through tilelang.compile (per-pass hook: "
                 "tilelang._ffi.run_pass)",
    "IRModule": "TVM's IRModule; a TileLang-C++ program is a @T.prim_func",
    "te": "TVM's tensor expression language",
    "arith": "TVM's arithmetic analyzer",
    "stmt_functor": "TVM's IR visitors",
    "script": "TVM's script parser; kernels are written with tilelang.language",
    "runtime": "TVM's runtime; kernels run through tilelang.compile",
    "relax": "TVM's Relax",
    "compile": "TVM's build; use tilelang.compile",
    "build": "TVM's build; use tilelang.compile",
}


def unsupported_attr(module, name):
    """AttributeError for private and dunder names (so hasattr, pickling and import machinery behave),
    else a TileLangUnsupportedError naming the TVM feature."""
    if name.startswith("_"):
        return AttributeError(f"module '{module}' has no attribute '{name}'")
    why = _WHY.get(name, "TVM's; tilelang.tvm maps the TVM names TileLang programs use (docs/compatibility.md)")
    return TileLangUnsupportedError(f"{module}.{name} is not supported by TileLang-C++: it is {why}")
