"""The parser's compound statements (a base class of parser.Parser): `if` on kernel values, `for` over
T.Parallel / T.Pipelined / T.serial / ... loops and Python sequences, `while`, `assert`, and the `with`
blocks (T.Kernel, T.attr, T.ws)."""
import ast
import inspect

from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from . import loop_exits as _exits
from .ast import AttrSpec, KernelSpec, LoopSpec, simplify
from .loop import PersistentSpec
from .thread_reduce import ReduceScopeSpec
from .expr import Expr, const
from .kernel import WsSpec, get_thread_binding
from .ws_schedule import WsOpSpec


def _index_dtype(*extents):
    """The dtype of an index over `extents`: int64 when any of them is, else int32."""
    return "int64" if any(getattr(e, "dtype", "") == "int64" for e in extents) else "int32"


class ControlParsing:
    def stmt_If(self, st, cond=None):
        if cond is None:
            cond = self.eval(st.test)
        if isinstance(cond, Expr) and _ffi.const_int(cond) is None:
            self.scopes.append({})
            then = self.block(st.body)
            self.scopes.pop()
            other = None
            if st.orelse:
                self.scopes.append({})
                other = self.block(st.orelse)
                self.scopes.pop()
            return _ffi.if_(cond, then, other, self.span(st))
        taken = st.body if bool(cond) else st.orelse
        return [self.block(taken)] if taken else None

    def stmt_For(self, st):
        if st.orelse:
            raise self.error(st, "for/else is not supported inside a T.prim_func")
        it = self.eval(st.iter)
        if isinstance(it, LoopSpec) and it.kind == "thread_binding":
            if not isinstance(st.target, ast.Name):
                raise self.error(st.target, "T.thread_binding binds one loop variable")
            (start, extent), = it.ranges
            idx = get_thread_binding(it.thread_dim)
            _exits.enter(self, st, "thread_binding")
            self.scopes.append({})
            self.bind(st.target.id, simplify(idx + start))
            body = self.loop_body(None, st.body)
            self.scopes.pop()
            if _ffi.const_int(extent) < it.thread_count:  # the first `extent` threads run the body
                body = _ffi.if_(_ffi.binary("lt", idx, extent), body, None, self.span(st))
            return body
        if isinstance(it, PersistentSpec):
            names = self.loop_names(st.target, len(it.domain))
            w = _ffi.var("w", "int32")
            coords, ok = it.coordinates(w)
            frame = _exits.enter(self, st, "serial")
            self.scopes.append({})
            for n, c in zip(names, coords):
                self.bind(n, c)
            body = self.loop_body(frame, st.body)
            self.scopes.pop()
            loop = _ffi.for_(w, const(0), it.waves, "serial", _ffi.if_(ok, body, None, self.span(st)),
                             {}, self.span(st))
            return frame.before_loop() + [loop] if frame is not None else loop
        if isinstance(it, LoopSpec):
            names = self.loop_names(st.target, len(it.ranges))
            # a loop over an int64 range counts in int64 (a dynamic size past 2^31 - 1)
            vars_ = [_ffi.var(n, _index_dtype(*it.ranges[k])) for k, n in enumerate(names)]
            frame = _exits.enter(self, st, it.kind)
            self.scopes.append({})
            for k, (n, v) in enumerate(zip(names, vars_)):
                step = it.steps[k] if it.steps else None
                self.bind(n, v if step is None else simplify(step[0] + v * step[1]))
            body = self.loop_body(frame, st.body)
            self.scopes.pop()
            for (mn, ext), v in reversed(list(zip(it.ranges, vars_))):
                body = _ffi.for_(v, mn, ext, it.kind, body, it.annotations, self.span(st))
            return frame.before_loop() + [body] if frame is not None else body
        if isinstance(it, (list, tuple, range, dict)) or inspect.isgenerator(it):
            frame = _exits.enter(self, st, "serial")
            out = frame.before_loop() if frame is not None else []
            for value in it:
                self.scopes.append({})
                self.assign_target(st, st.target, value)
                out.append(self.loop_body(frame, st.body))
                self.scopes.pop()
            return out
        raise self.error(st.iter, "a kernel loop iterates over T.Parallel, T.Pipelined, T.serial, T.unroll, "
                         "T.grid, range, or a Python list")

    def stmt_Assert(self, st):
        """`assert` on Python values is checked while parsing (a failure is the user's error at this line);
        on a kernel value it becomes T.device_assert."""
        cond = self.eval(st.test)
        msg = "" if st.msg is None else self.eval(st.msg)
        if isinstance(cond, Expr) and _ffi.const_int(cond) is None:
            if not self.ctx.kernels:
                raise self.error(st, "an `assert` on a kernel value must be inside `with T.Kernel(...)`")
            return self.apply(st, _ffi.evaluate, _ffi.call("int32", "device_assert",
                                                           [cond, _ffi.string_imm(str(msg))]), self.span(st))
        if not self.apply(st.test, bool, cond):
            raise self.error(st, f"assertion failed{': ' + str(msg) if msg else ''}", TileLangTypeError)
        return None

    def stmt_While(self, st):
        """A `while` on a Python value runs while parsing (its body repeats in the IR); a `while` on a
        run-time condition is a while loop of the IR, its condition evaluated before every iteration."""
        if st.orelse:
            raise self.error(st, "while/else is not supported inside a T.prim_func")
        frame = _exits.enter(self, st, "serial")
        out = frame.before_loop() if frame is not None else []
        if frame is not None and frame.brk is not None and isinstance(st.test, ast.Constant) and st.test.value:
            return out + [self.runtime_while(st, None, frame)]  # `while True:` ... `break`: a run-time loop
        for _ in range(1 << 16):
            cond = self.eval(st.test)
            if isinstance(cond, Expr) and _ffi.const_int(cond) is None:
                return out + [self.runtime_while(st, cond, frame)]
            if not self.apply(st.test, bool, cond):
                return out
            # no new scope: the body updates the names the condition reads
            out.append(self.loop_body(frame, st.body))
        raise self.error(st, "this parse-time `while` loop ran 65536 times; is its condition ever false?")

    def runtime_while(self, st, cond, frame=None):
        if cond is None:  # `while True:` left by `break`
            self.scopes.append({})
            body = self.loop_body(frame, st.body)
            self.scopes.pop()
            return _ffi.while_(frame.running(), body, self.span(st))
        if cond.dtype != "bool":
            raise self.error(st.test, f"a `while` condition must be a comparison or another bool, not a {cond.dtype} "
                             "value", TileLangTypeError)
        if self.ctx.pre_stmts:  # builder.emit_before: would run once, before the loop, not at every test
            raise self.error(st.test, "a `while` condition cannot draw random numbers (T.rng_rand, "
                             "T.rng_rand_float): draw into a T.alloc_var before the loop and again at the end of "
                             "its body, and test that")
        names = {n.id for n in ast.walk(st.test) if isinstance(n, ast.Name)}
        assigned = set()
        for node in (x for b in st.body for x in ast.walk(b)):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            assigned |= {t.id for t in targets if isinstance(t, ast.Name)}
        rebound = sorted(n for n in names & assigned
                         if not (isinstance(self.try_lookup(n), _ffi.Buffer) and self.try_lookup(n).scope == "local.var"))
        if rebound:
            raise self.error(st, f"the `while` condition reads {', '.join(rebound)}, which the loop body rebinds as a "
                             "Python name: the condition would never see the new value; keep loop state in a "
                             "T.alloc_var (`i = T.alloc_var(\"int32\", init=0)` ... `i = i + 1`)")
        self.scopes.append({})
        body = self.loop_body(frame, st.body)
        self.scopes.pop()
        if frame is not None and frame.brk is not None:
            cond = _ffi.binary("and", cond, frame.running())
        return _ffi.while_(cond, body, self.span(st))

    def loop_names(self, target, n):
        if isinstance(target, ast.Name):
            names = [target.id]
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            names = [e.id for e in target.elts]
        else:
            raise self.error(target, "loop variables must be plain names")
        if len(names) != n:
            raise self.error(target, f"the loop has {n} dimensions but {len(names)} loop variables")
        return names

    def stmt_With(self, st):
        if len(st.items) > 1:
            # `with A, B:` is `with A:` around `with B:`
            inner = ast.With(items=st.items[1:], body=st.body, type_comment=None)
            ast.copy_location(inner, st.items[1].context_expr)
            inner.end_lineno, inner.end_col_offset = st.end_lineno, st.end_col_offset
            st = ast.With(items=st.items[:1], body=[inner], type_comment=None, lineno=st.lineno,
                          col_offset=st.col_offset, end_lineno=st.end_lineno, end_col_offset=st.end_col_offset)
        item = st.items[0]
        spec = self.eval(item.context_expr)
        if getattr(spec, "parse_time_context", False):
            # a Python context manager that acts while the kernel is parsed (tilelang.tools.cuda.iket.range)
            if item.optional_vars is not None:
                raise self.error(item.optional_vars, f"`with {type(spec).__name__}(...)` binds no names")
            spec.__enter__()
            try:
                return self.block(st.body)
            finally:
                spec.__exit__(None, None, None)
        if isinstance(spec, AttrSpec):
            if item.optional_vars is not None:
                raise self.error(item.optional_vars, "`with T.attr(...)` binds no names")
            return _ffi.attr_stmt(spec.node, spec.key, spec.value, self.block(st.body), self.span(st))
        if isinstance(spec, ReduceScopeSpec):
            if item.optional_vars is not None:
                raise self.error(item.optional_vars, '`with T.attr(reducer, "reduce_scope", ...)` binds no names')
            saved = getattr(self.ctx, "reduce_scope", None)
            self.ctx.reduce_scope = (spec.reducer, self.let_values)
            try:
                return self.block(st.body)
            finally:
                self.ctx.reduce_scope = saved
        if isinstance(spec, WsOpSpec):  # the plain form is spliced into its block (Parser.block_step)
            raise self.error(st, "`with T.ws_op(id):` takes one item and binds no names")
        if isinstance(spec, WsSpec):
            if item.optional_vars is not None:
                raise self.error(item.optional_vars, "`with T.ws(...)` binds no names")
            return self.warp_specialized(st, spec.groups)
        if not isinstance(spec, KernelSpec):
            raise self.error(item.context_expr, "the only `with` block inside a T.prim_func is `with T.Kernel(...)`")
        if self.ctx.kernels:
            raise self.error(st, "T.Kernel cannot be nested inside another T.Kernel")
        n = len(spec.grid)
        if item.optional_vars is None:
            names = []
        else:
            ov = item.optional_vars
            if isinstance(ov, ast.Name):
                names = [ov.id]
            elif isinstance(ov, ast.Tuple) and all(isinstance(e, ast.Name) for e in ov.elts):
                names = [e.id for e in ov.elts]
            else:
                raise self.error(item.optional_vars, "T.Kernel binds plain names: `as bx` or `as (bx, by)`")
            if len(names) != n:
                raise self.error(item.optional_vars, f"T.Kernel has {n} grid dimensions but binds {len(names)} names")
        axes = ["bx", "by", "bz"]
        # a grid extent of an int64 size gives int64 block indices, so `bx * tile + i` cannot wrap
        vars_ = [_ffi.var(names[i] if i < len(names) else axes[i], _index_dtype(spec.grid[i])) for i in range(n)]
        frame = builder.KernelFrame()
        frame.threads = [_ffi.const_int(t) for t in spec.threads]
        frame.grid = list(spec.grid)
        frame.block_vars = vars_  # T.get_block_binding
        frame.cluster = spec.cluster  # T.ClusterKernel's (x, y, z), or None
        frame.cluster_barriers = []   # T.alloc_cluster_barrier's buffers
        # workspaces allocated before the kernels (T.alloc_global / T.alloc_buffer at the top): allocated with this
        # kernel, hoisted to one hidden parameter that every kernel of the function shares
        frame.allocs.extend(self.ctx.function_workspaces)
        self.ctx.function_workspaces = []
        self.ctx.kernels.append(frame)
        self.scopes.append({})
        for nm, v in zip(names, vars_):
            self.bind(nm, v)
        body = self.block(st.body)
        if frame.cluster_barriers:
            # the inits are made visible to the cluster (fence.mbarrier_init) and every block of it has initialised
            # its barriers before any block arrives on a peer's (barrier.cluster)
            frame.prologue.append(_ffi.evaluate(_ffi.call("void", "tl.fence_barrier_init", []), self.span(st)))
            frame.prologue.append(_ffi.evaluate(_ffi.call("void", "tl.cluster_sync", []), self.span(st)))
        if frame.prologue:
            body = _ffi.seq(frame.prologue + [body], self.span(st))
        for src, sp in reversed(frame.imports):  # T.import_source
            body = _ffi.attr_stmt(None, "tl.import_source", _ffi.string_imm(src), body, sp or self.span(st))
        for buf, pos, sp in reversed(frame.positions):  # T.alloc_L1 / _L0A / _L0B / _L0C / _ub (Ascend)
            body = _ffi.attr_stmt(buf, "ascend.position", _ffi.string_imm(pos), body, sp or self.span(st))
        for buf, value, sp in reversed(frame.layouts):  # T.annotate_layout
            body = _ffi.attr_stmt(buf, "tl.user_layout", value, body, sp or self.span(st))
        if getattr(frame, "ws_schedule", None) is not None:  # T.annotate_ws_schedule (ws_schedule.py)
            sched, sp = frame.ws_schedule
            ir, pipes = sched.to_ir()
            for buf, value in reversed(pipes):
                body = _ffi.attr_stmt(buf, "tl.ws_pipeline", value, body, sp or self.span(st))
            body = _ffi.attr_stmt(None, "tl.ws_schedule", ir, body, sp or self.span(st))
        if getattr(frame, "no_reg_alloc", False):  # T.disable_warp_group_reg_alloc()
            body = _ffi.attr_stmt(None, "tl.disable_warp_group_reg_alloc", const(1), body, self.span(st))
        if spec.cluster is not None and spec.cluster != (1, 1, 1):  # T.ClusterKernel (docs/clusters.md)
            body = _ffi.attr_stmt(None, "tl.cluster_dims", _ffi.call("handle", "list", [const(c) for c in spec.cluster]),
                                  body, self.span(st))
        self.scopes.pop()
        self.ctx.kernels.pop()
        return _ffi.kernel(spec.grid, vars_, spec.threads, frame.allocs, frame.var_inits, body, self.span(st))

    def warp_specialized(self, st, groups):
        """`with T.ws(i, ...)`: the body under `tx // 128 in groups`, marked tl.warp_specialized (the emulator
        then runs each warp group as its own fiber; the CUDA lowering issues single-thread work on the block's
        first thread)."""
        sp = self.span(st)
        outer = self.ws_groups
        if outer is not None and list(groups) != list(outer):
            def ws(g):
                return "T.ws(" + ", ".join(str(x) for x in g) + ")"

            raise self.error(st, f"{ws(groups)} inside {ws(outer)}: a block runs on the threads of the "
                             "warp groups of every T.ws around it, so this body would run on "
                             + (f"warp group(s) {sorted(set(groups) & set(outer))} only" if set(groups) & set(outer)
                                else "no thread at all") + "; write the T.ws blocks side by side, not nested")
        wg = _ffi.binary("floordiv", _ffi.call("int32", "tl.thread_idx", []), const(128))
        cond = None
        for g in groups:
            c = _ffi.binary("eq", wg, const(g))
            cond = c if cond is None else _ffi.binary("or", cond, c)
        self.ws_groups = groups
        try:
            body = self.block(st.body)
        finally:
            self.ws_groups = outer
        # the value: the block's first thread, which issues its single-thread work (T.tma_copy)
        return _ffi.attr_stmt(None, "tl.warp_specialized", const(128 * groups[0]), _ffi.if_(cond, body, None, sp), sp)

    def stmt_Return(self, st):
        raise self.error(st, "a T.prim_func returns nothing; write results to an output tensor")
