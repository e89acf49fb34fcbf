"""`break` and `continue` in kernel loops (T.serial, T.unroll, T.grid, range, parse-time Python loops and
`while` loops), lowered by the front end into per-thread flags, so that every backend runs them through the
IR it already has (no jump in the IR):

    for i in T.serial(n):            loop_break = 0
        A                            for i in T.serial(n):
        if c:                            if loop_break == 0:
            break            ->              loop_continue = 0
        B                                    A
                                             if c:
                                                 loop_break = 1
                                             if loop_break == 0 and loop_continue == 0:
                                                 B

The remaining iterations of a loop that broke run no statement; a `while` loop's condition also tests the
flag, and `while True:` with a `break` becomes a run-time while loop on the flag alone. The flags are
T.alloc_var registers (int32). A `break` / `continue` in T.Parallel, T.Pipelined, T.vectorized or
T.thread_binding loops is a TileLangSyntaxError at its line (those loops have no iteration order to leave)."""
import ast

from .. import _ffi
from .allocate import alloc_var
from .expr import const

ALLOWED_KINDS = ("serial", "unroll")


def exits_of(stmts):
    """The first `break` and `continue` nodes among `stmts` that belong to the loop around them (nested
    loops and function definitions excluded): {"break": node, "continue": node}."""
    found = {}

    def walk(n):
        if isinstance(n, ast.Break):
            found.setdefault("break", n)
        elif isinstance(n, ast.Continue):
            found.setdefault("continue", n)
        elif not isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                ast.Lambda, ast.ClassDef)):
            for c in ast.iter_child_nodes(n):
                walk(c)

    for s in stmts:
        walk(s)
    return found


def _flag(parser, name):
    saved = parser.ctx.pending_name
    parser.ctx.pending_name = name
    try:
        return alloc_var("int32")
    finally:
        parser.ctx.pending_name = saved


def _set(buf, value, span):
    return _ffi.store(buf, const(value), [const(0)], span)


def _is_zero(buf):
    return _ffi.binary("eq", _ffi.load(buf, [const(0)]), const(0))


class LoopExits:
    """The flags of one loop whose body uses `break` and/or `continue`."""

    def __init__(self, parser, exits, span):
        self.span = span
        self.brk = _flag(parser, "loop_break") if "break" in exits else None
        self.cnt = _flag(parser, "loop_continue") if "continue" in exits else None

    def before_loop(self):
        """Statements before the loop: no break taken yet (the loop may run many times)."""
        return [_set(self.brk, 0, self.span)] if self.brk is not None else []

    def running(self):
        """`loop_break == 0` (None without a break)."""
        return _is_zero(self.brk) if self.brk is not None else None

    def clear(self):
        """Neither flag set: the rest of the iteration runs."""
        conds = [_is_zero(b) for b in (self.brk, self.cnt) if b is not None]
        return conds[0] if len(conds) == 1 else _ffi.binary("and", conds[0], conds[1])

    def iteration(self, body):
        """One iteration's statements: the continue flag reset, all skipped once the loop broke."""
        if self.cnt is not None:
            body = _ffi.seq([_set(self.cnt, 0, self.span), body], None)
        if self.brk is not None:
            body = _ffi.if_(self.running(), body, None, self.span)
        return body

    def take(self, node, span):
        """The statement a `break` / `continue` (at `span`) becomes."""
        return _set(self.brk if isinstance(node, ast.Break) else self.cnt, 1, span)


def enter(parser, st, kind):
    """The LoopExits of loop statement `st` (None when its body uses neither), checked against the loop kind."""
    exits = exits_of(st.body)
    if not exits:
        return None
    if kind not in ALLOWED_KINDS:
        node = exits.get("break") or exits.get("continue")
        word = "break" if isinstance(node, ast.Break) else "continue"
        what = {"parallel": "T.Parallel", "pipelined": "T.Pipelined", "vectorized": "T.vectorized",
                "thread_binding": "T.thread_binding"}.get(kind, kind)
        raise parser.error(node, f"`{word}` inside a {what} loop is not supported (its iterations have no order "
                           "to leave); `break` and `continue` work in T.serial, T.unroll, T.grid, range and while "
                           "loops")
    return LoopExits(parser, exits, parser.span(st))


class LoopExitParsing:
    """The parser's part (a base class of parser.Parser): `self.loops` holds, per enclosing loop, its
    LoopExits or None."""

    def guard_rest(self, st, rest, out):
        """After a statement that may `break` / `continue` the innermost loop, the rest of the block runs only
        while neither flag is set (loop_exits.py). True when `rest` was consumed."""
        frame = self.loops[-1] if self.loops else None
        if frame is None or not rest or not exits_of([st]):
            return False
        out.append(_ffi.if_(frame.clear(), self.block(rest), None, self.span(rest[0])))
        return True

    def stmt_Break(self, st):
        return self.loop_exit(st, "break")

    def stmt_Continue(self, st):
        return self.loop_exit(st, "continue")

    def loop_exit(self, st, word):
        frame = self.loops[-1] if self.loops else None
        if frame is None:
            raise self.error(st, f"`{word}` outside a kernel loop")
        return frame.take(st, self.span(st))

    def loop_body(self, frame, stmts):
        """A loop body parsed with `frame` innermost, as one iteration (loop_exits.LoopExits.iteration)."""
        self.loops.append(frame)
        try:
            body = self.block(stmts)
        finally:
            self.loops.pop()
        return frame.iteration(body) if frame is not None else body
