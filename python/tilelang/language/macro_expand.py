"""Expansion of @T.macro calls: the macro's body is parsed where it is called, by a parser that shares
the caller's build context (open kernels, allocations, spans) and binds the macro's parameters to the
call's arguments. Errors point at the macro's own source lines."""
import ast
import inspect

from .. import _ffi
from ..errors import TileLangSyntaxError
from .parser import Parser, function_source

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
            from .parser import _BOUND

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
