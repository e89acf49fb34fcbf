"""State shared by the parser and the T.* functions while one function is being parsed: the
current source span, the name being assigned, and the stack of open kernels (allocations)."""
import contextlib
import inspect

from .. import _ffi
from ..errors import TileLangSyntaxError


class KernelFrame:
    def __init__(self):
        self.allocs = []
        self.var_inits = []
        self.prologue = []  # statements the kernel body starts with (T.alloc_barrier's mbarrier inits)
        self.threads = []  # the thread extents of T.Kernel(threads=...), ints
        self.grid = []  # the grid extents of T.Kernel (IR expressions)
        self.rng = None  # the per-thread random-number generator its first T.rng_init declares (rng.py)
        self.block_vars = []  # the block index vars (bx, by, bz)
        self.layouts = []  # (buffer, IR value, span) from T.annotate_layout: attrs "tl.user_layout" on the body
        self.reducers = {}  # buffer name -> op of T.alloc_reducer buffers (updated by atomics)
        self.imports = []  # (CUDA source, span) of T.import_source: attrs "tl.import_source" on the body
        self.positions = []  # (buffer, "L1" / "L0A" / "L0B" / "L0C" / "UB", span): T.alloc_L1 ... (Ascend)


class BuildContext:
    def __init__(self):
        self.span = None  # (file, line, col) of the node being evaluated
        self.pending_name = None  # the Python name an allocation is assigned to
        self.kernels = []
        self.attrs = {}  # function attrs (e.g. layout hints a backend may not honour, to warn about)
        self.scalar_params = {}  # name -> Var of the function's scalar parameters
        self.size_vars = {}  # name -> the size Var a T.make_tensor shape uses for that scalar parameter
        self.bound_tensors = []  # (buffer, address): T.make_tensor(table[i], ...) awaiting its tl.buffer_bind
        self.in_prim_func_body = False  # parsing a @T.prim_func's body (past its parameters)
        self.function_workspaces = []  # T.alloc_global before any kernel: placed in the next kernel's allocations
        self.pre_stmts = None  # statements to put before the statement being parsed (see emit_before)


_stack = []


def current():
    return _stack[-1] if _stack else None


@contextlib.contextmanager
def scope():
    ctx = BuildContext()
    _stack.append(ctx)
    try:
        yield ctx
    finally:
        _stack.pop()


def span():
    ctx = current()
    return ctx.span if ctx else None


def emit_before(stmts):
    """Statements that run before the statement being parsed: what a T.* call with an effect that is used as a
    value (T.rng_rand()) does first. The parser puts them in front of that statement, in evaluation order."""
    ctx = current()
    if ctx is None or ctx.pre_stmts is None:
        raise TileLangSyntaxError("this call has an effect and can only be used inside a statement of a "
                                  "@T.prim_func body")
    ctx.pre_stmts.extend(stmts)


def require_context(what):
    ctx = current()
    if ctx is None:
        raise TileLangSyntaxError(f"{what} can only be used inside a @T.prim_func body")
    return ctx


def error_at(span, msg, cls=TileLangSyntaxError):
    """An error of class cls whose message starts with file:line:col and quotes the source line."""
    first, nl, rest = _ffi.format_span(span).partition("\n")
    err = cls(f"{first}: {msg}{nl}{rest}")
    err.span = span
    return err


def caller_span(frame):
    """(file, line, col) of the call that frame is executing."""
    info = inspect.getframeinfo(frame, context=0)
    pos = getattr(info, "positions", None)  # Python >= 3.11
    if pos is not None and pos.lineno is not None and pos.col_offset is not None:
        return (info.filename, pos.lineno, pos.col_offset + 1)
    return (info.filename, info.lineno, 1)
