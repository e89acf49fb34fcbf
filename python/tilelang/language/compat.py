"""T.* names TileLang programs use beyond the core tile language: what maps onto this compiler's IR
is implemented here; what does not raises TileLangUnsupportedError naming the construct (never a
silent no-op). README.md, "TileLang compatibility", lists both."""
import inspect

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import DType, dtype_str
from .expr import Expr
from .expr import const as _const


def _unsupported(name, why, instead=None):
    msg = f"{name} is not supported by TileLang-C++ yet: {why}"
    if instead:
        msg += f"; {instead}"
    return TileLangUnsupportedError(msg)


# ---- expressions ------------------------------------------------------------------------------------------
def clamp(x, lo, hi):
    """T.clamp(x, lo, hi) = min(max(x, lo), hi)."""
    x = _const(x)
    lo = _const(lo, x.dtype) if not isinstance(lo, Expr) else lo
    hi = _const(hi, x.dtype) if not isinstance(hi, Expr) else hi
    return _ffi.binary("min", _ffi.binary("max", x, lo), hi)


def Cast(dtype, value):  # noqa: N802 - TileLang's (TVM's) spelling: T.Cast(dtype, value)
    return _ffi.cast(dtype_str(dtype), _const(value))


def assume(cond):
    """T.assume(cond): a fact the program promises. The compiler does not use it for simplification
    yet; dropping a promise never changes a correct program's results."""
    c = _const(cond)
    if c.dtype != "bool":
        raise TileLangTypeError(f"T.assume takes a condition, got a {c.dtype} expression")
    return None


def disable_warp_group_reg_alloc():
    """A Hopper hint (do not rebalance registers between warp groups). This compiler never
    rebalances registers (no setmaxnreg), so the hint always holds."""
    return None


def reinterpret(dtype, value):
    """T.reinterpret(dtype, value): the bits of `value` read as a `dtype` of the same width (a bit cast,
    as TVM's tir.reinterpret); T.cast converts the value instead."""
    to = dtype_str(dtype)
    v = _const(value)
    from_bits, to_bits = _bits(v.dtype), _bits(to)
    if from_bits != to_bits:
        raise TileLangTypeError(f"T.reinterpret from {v.dtype} ({from_bits} bits) to {to} ({to_bits} bits): "
                                "a bit cast needs types of the same width")
    return _ffi.call(to, "tl.reinterpret", [v])


def _bits(dtype):
    import re

    m = re.fullmatch(r"u?int(8|16|32|64)|float(16|32|64)|bfloat(16)|float8_e4m3fn|float8_e5m2", dtype)
    if not m:
        raise TileLangTypeError(f"T.reinterpret takes 8- to 64-bit integer and float scalars, not {dtype}")
    return int(next((g for g in m.groups() if g), 8))


def alloc_global(*args, **kwargs):
    raise _unsupported("T.alloc_global", "kernels cannot allocate global workspace",
                       "pass the workspace as a T.Tensor parameter")


def get_thread_binding(dim=0):
    raise _unsupported("T.get_thread_binding", "tile programs here do not see thread indices (the compiler "
                       "partitions T.Parallel / fragment work over threads itself)",
                       "write the per-element work in T.Parallel")


def thread_binding(*args, **kwargs):
    raise _unsupported("T.thread_binding", "loops are bound to threads by the compiler", "use T.Parallel")


def sync_threads(*args, **kwargs):
    raise _unsupported("T.sync_threads", "barriers are inserted by the compiler's shared-memory analysis and a "
                       "user barrier could not be checked against it", "remove it; the compiler places barriers")


def reshape(*args, **kwargs):
    raise _unsupported("T.reshape", "the IR has no buffer views (two buffers sharing storage)",
                       "index the original buffer")


def view(*args, **kwargs):
    raise _unsupported("T.view", "the IR has no buffer views (two buffers sharing storage)",
                       "index the original buffer")


def ptr(*args, **kwargs):
    raise _unsupported("T.ptr", "parameters are tensors with a shape (T.Tensor) or scalars",
                       "declare the parameter as T.Tensor(shape, dtype)")


def im2col(*args, **kwargs):
    raise _unsupported("T.im2col", "there is no im2col tile op", "gather the patch with T.Parallel")


def access_ptr(*args, **kwargs):
    raise _unsupported("T.access_ptr", "the IR has no raw pointers")


def call_extern(*args, **kwargs):
    raise _unsupported("T.call_extern", "calls into user C/CUDA functions are not supported")


def _hopper_only(name):
    def f(*args, **kwargs):
        raise _unsupported(f"T.{name}", "Hopper-specific (TMA, mbarriers, warp specialisation) and not implemented",
                           "write the kernel with T.copy / T.gemm / T.Pipelined; the compiler picks the instructions")

    f.__name__ = name
    return f


HOPPER_ONLY = ["ClusterKernel", "ws", "copy_cluster", "mma_gemm_blockscaled"]


# ---- macros ----------------------------------------------------------------------------------------------
class Macro:
    """@T.macro: a function whose body is spliced into the kernel where it is called (parsed in the
    caller's context with its parameters bound to the arguments). A macro used as a value must have
    `return <expr>` as its only statement after parse-time work."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        ctx = builder.current()
        if ctx is None:
            raise TileLangSyntaxError(f"macro '{self.__name__}' can only be called inside a kernel")
        from .macro import expand

        return expand(self, ctx, args, kwargs)


def macro(fn=None, **options):
    if fn is None:
        return lambda f: Macro(f)
    if not inspect.isfunction(fn):
        raise TileLangTypeError("@T.macro decorates a function")
    return Macro(fn)


# ---- data types -------------------------------------------------------------------------------------------
class _Unsupported_DType(DType):
    """A dtype name TileLang has and this compiler does not: any use says so."""

    def __init__(self, name, why):
        self.name = name
        self.why = why

    def __call__(self, *a, **k):
        raise _unsupported(f"T.{self.name}", self.why)


DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
                 "short": "int16", "uint": "uint32", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32",
                 "float8_e4m3": "float8_e4m3fn"}
UNSUPPORTED_DTYPES = {
    "tfloat32": "TF32 tensor-core inputs are not implemented (the CUDA gemm takes fp16/bf16); use T.float32 data",
    "float8_e4m3fnuz": "the fnuz fp8 variants are not implemented; use T.float8_e4m3fn",
    "float8_e5m2fnuz": "the fnuz fp8 variants are not implemented; use T.float8_e5m2",
    "float4_e2m1fn": "fp4 is not implemented",
}
