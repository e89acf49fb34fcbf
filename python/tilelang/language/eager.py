"""The T.* names of the eager @tilelang.jit style (tilelang/jit/eager.py parses such a function): T.const
sizes, T.empty outputs and T.annotate_pass_configs. They act on the parse state the eager parser keeps in
the build context (ctx.eager)."""
import re

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from . import builder
from .expr import Expr, const as _const
from .proxy import TensorSpec


def const(names, dtype="int32"):
    """M, N = T.const("M, N"): sizes of an eager @tilelang.jit function, bound from its tensor arguments'
    shapes when it is called (or given as keywords: f.compile(M=..., N=...); see tilelang/jit/eager.py)."""
    ctx = builder.current()
    st = getattr(ctx, "eager", None) if ctx is not None else None
    if st is None:
        raise TileLangSyntaxError("T.const can only be used in the body of an eager @tilelang.jit function; in a "
                                  "@T.prim_func use T.dynamic(name) for a size known at run time")
    if not isinstance(names, str) or not names.strip():
        raise TileLangTypeError("T.const takes the names as one string, e.g. T.const(\"M, N, K\")")
    parts = [p for p in re.split(r"[\s,]+", names.strip()) if p]
    for p in parts:
        if not p.isidentifier():
            raise TileLangSyntaxError(f"T.const: '{p}' is not a valid name")
    return st.const(parts, dtype)


def empty(shape, dtype="float32"):
    """C = T.empty(shape, dtype): an output of an eager @tilelang.jit function, allocated on each call
    and returned by `return C`."""
    ctx = builder.require_context("T.empty")
    st = getattr(ctx, "eager", None)
    if st is None:
        raise TileLangSyntaxError("T.empty declares an output of an eager @tilelang.jit function (whose body is "
                                  "the kernel); in a @T.prim_func, make the output a parameter instead")
    if ctx.kernels:
        raise TileLangSyntaxError("T.empty must be called before `with T.Kernel(...)`")
    if isinstance(shape, (int, Expr)):
        shape = (shape,)
    spec = TensorSpec(shape, dtype)
    name = ctx.pending_name or f"out{len(st.outputs)}"
    if name in st.jit.param_kind or any(o.name == name for o in st.outputs):
        raise TileLangSyntaxError(f"the output name '{name}' is already used")
    # a dimension naming a run-time scalar that an input tensor's shape binds (`M: T.int32`) is that size
    dims = [_const(d) for d in spec.shape]
    dims = [ctx.size_vars.get(d.name, d) if isinstance(d, _ffi.Var) and d.name in ctx.scalar_params else d
            for d in dims]
    buf = _ffi.buffer(name, spec.dtype, dims, "global", ctx.span)
    st.outputs.append(buf)
    st.output_spans[name] = ctx.span
    return buf


def annotate_pass_configs(configs):
    """Pass configs for an eager @tilelang.jit function, from inside its body (the decorator's
    pass_configs take precedence)."""
    ctx = builder.current()
    st = getattr(ctx, "eager", None) if ctx is not None else None
    if st is None:
        raise TileLangSyntaxError("T.annotate_pass_configs is supported in the body of an eager @tilelang.jit "
                                  "function; pass pass_configs= to tilelang.compile otherwise")
    if not isinstance(configs, dict):
        raise TileLangTypeError("T.annotate_pass_configs takes a dict")
    st.pass_configs.update(configs)
