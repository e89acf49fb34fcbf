"""State shared by the parser and the T.* functions while one function is being parsed: the
current source span, the name being assigned, and the stack of open kernels (allocations)."""
import contextlib

from ..errors import TileLangSyntaxError


class KernelFrame:
    def __init__(self):
        self.allocs = []
        self.var_inits = []


class BuildContext:
    def __init__(self):
        self.span = None  # (file, line, col) of the node being evaluated
        self.pending_name = None  # the Python name an allocation is assigned to
        self.kernels = []


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


def require_context(what):
    ctx = current()
    if ctx is None:
        raise TileLangSyntaxError(f"{what} can only be used inside a @T.prim_func body")
    return ctx
