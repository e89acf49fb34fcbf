"""@T.macro, and the expansion of its calls: the macro's body is parsed where it is called, by a parser that shares
the caller's build context (open kernels, allocations, spans) and binds the macro's parameters to the
call's arguments. Errors point at the macro's own source lines."""
import ast
import inspect

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from . import builder
from .parser import _BOUND, Parser
from .source import function_source

_MAX_DEPTH = 32


class _MacroParser(Parser):
    returned = None
    has_return = False
    inline_values = False  # a value macro: `y = <expr>` names the expression instead of binding a let

    def as_let(self, st):
        let = super().as_let(st)
        if self.inline_values and isinstance(let, tuple):
            var, value, node = let
            self.bind(node.targets[0].id if isinstance(node, ast.Assign) else node.target.id, value)
            return _BOUND
        return let

    def stmt_Return(self, st):
        if self.has_return:
            raise self.error(st, "a macro returns once, at its end")
        self.has_return = True
        self.returned = None if st.value is None else self.eval(st.value)
        self.return_scopes = len(self.scopes)
        return None


def expand(macro, ctx, args, kwargs):
    fn = macro.fn
    depth = getattr(ctx, "macro_depth", 0)
    if depth >= _MAX_DEPTH:
        raise TileLangSyntaxError(f"macro '{macro.__name__}' expands more than {_MAX_DEPTH} levels deep (recursion?)")
    filename, start, indent, fdef = function_source(fn, f"macro '{macro.__name__}'")
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise TileLangSyntaxError(f"macro '{macro.__name__}': {e}") from None
    bound.apply_defaults()
    anns = getattr(fn, "__annotations__", {}) or {}
    for name, value in bound.arguments.items():  # T.SharedBuffer / T.FragmentBuffer / T.LocalBuffer
        check = getattr(anns.get(name), "check_argument", None)
        if check is not None and isinstance(value, _ffi.Buffer):
            check(value, macro.__name__, name)
    loc = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                loc[name] = cell.cell_contents
            except ValueError:
                pass
    loc.update(bound.arguments)
    p = _MacroParser(filename, start - 1, dict(fn.__globals__), loc)
    p.span = lambda node: (filename, node.lineno + start - 1, node.col_offset + 1 + indent)
    p.ctx = ctx
    saved_span, saved_pending = ctx.span, ctx.pending_name
    ctx.macro_depth = depth + 1
    ctx.pending_name = None
    try:
        body_stmts = list(fdef.body)
        tail = body_stmts[-1] if body_stmts else None
        if isinstance(tail, ast.Return):
            body_stmts = body_stmts[:-1]
            p.inline_values = tail.value is not None
        body = p.block(body_stmts)
        if isinstance(tail, ast.Return):
            ctx.span = p.span(tail)
            p.stmt_Return(tail)
    finally:
        ctx.macro_depth = depth
        ctx.span, ctx.pending_name = saved_span, saved_pending
    empty = not _ffi.print_stmt(body).strip()
    if p.returned is None:
        return None if empty else body
    if not empty:
        raise TileLangSyntaxError(f"macro '{macro.__name__}' both emits statements and returns a value; a macro used "
                                  "as a value may only compute its return expression (split it in two)")
    return p.returned


class Macro:
    """@T.macro: a function whose body is spliced into the kernel where it is called (parsed in the
    caller's context with its parameters bound to the arguments). A macro used as a value must have
    `return <expr>` as its only statement after parse-time work."""

    is_macro = True  # the parser asks this (parser_expr.py cannot import this module)

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        ctx = builder.current()
        if ctx is None:
            raise TileLangSyntaxError(f"macro '{self.__name__}' can only be called inside a kernel")
        return expand(self, ctx, args, kwargs)


def macro(fn=None, hygienic=True, **options):
    """@T.macro / @T.macro(hygienic=...). Macros are hygienic here: names in the body resolve where the macro is
    defined (its globals and closure), never in the caller's kernel."""
    if options:
        raise TileLangTypeError(f"T.macro() got unexpected options {sorted(options)}; it takes hygienic=")
    if not hygienic:
        from ..log import warn

        warn("T.macro(hygienic=False) is accepted but not implemented: names in the macro resolve where it "
             "is defined (a name only the caller has is an error at its use)")
    if fn is None:
        return lambda f: Macro(f)
    if not inspect.isfunction(fn):
        raise TileLangTypeError("@T.macro decorates a function")
    return Macro(fn)
