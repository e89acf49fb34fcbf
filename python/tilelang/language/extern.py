"""User CUDA device code: T.import_source(source) puts CUDA C++ before the kernel, T.call_extern calls a
function of it. CUDA only: the emulator, the CPU target and the other GPU targets cannot run user CUDA
source and refuse it at the line."""
from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from . import builder
from .async_copy import AccessPtr
from .dtypes import dtype_str
from .expr import Expr
from .expr import const as _const


def import_source(source=None):
    """Adds CUDA C++ `source` (device functions for T.call_extern) to the kernel's translation unit, before
    the kernel. Each distinct source is added once."""
    if source is None:
        return None
    if not isinstance(source, str):
        raise TileLangTypeError(f"T.import_source takes the CUDA source as a string, not {type(source).__name__}")
    ctx = builder.current()
    if ctx is None or not ctx.kernels:
        raise TileLangSyntaxError("T.import_source must be called inside a `with T.Kernel(...)` block")
    frame = ctx.kernels[-1]
    if source not in [s for s, _ in frame.imports]:
        frame.imports.append((source, builder.span()))
    return None


def _is_dtype(x):
    try:
        dtype_str(x)
        return True
    except Exception:  # noqa: BLE001
        return False


def call_extern(*args, dtype="void"):
    """Calls a device function of T.import_source'd (or CUDA's own) code: T.call_extern(name, *args,
    dtype="void") as TileLang writes it, or TVM's T.call_extern(dtype, name, *args). A T.access_ptr(x[i])
    argument passes the element's address; other arguments are values."""
    if len(args) >= 2 and isinstance(args[1], str) and not isinstance(args[0], Expr) and \
            (args[0] in ("void", "handle") or _is_dtype(args[0])):
        dtype, args = args[0], args[1:]  # TVM's order
    if not args or not isinstance(args[0], str) or not args[0].isidentifier():
        raise TileLangTypeError("T.call_extern takes the function's name (a C identifier) first")
    name, rest = args[0], args[1:]
    ops = [_ffi.string_imm(name)]
    for a in rest:
        if isinstance(a, AccessPtr):
            ops.append(_ffi.call("handle", "address_of", [a.elem]))
        elif isinstance(a, _ffi.Buffer):
            ops.append(_ffi.call("handle", "address_of", [_ffi.load(a, [_const(0) for _ in a.shape])]))
        else:
            ops.append(_const(a))
    dt = "void" if dtype in (None, "void") else dtype_str(dtype)
    return _ffi.call(dt, "tl.call_extern", ops)
