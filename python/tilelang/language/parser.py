"""The front end: walks the Python AST of a @T.prim_func and builds IR through the C++ builder.

Python values (ints, tuples, Python-level `if` conditions, loops over lists) are evaluated while
parsing; IR values become IR. Every error carries file:line:col of the user's source.
"""
import ast
import builtins
import inspect
import itertools
import linecache
import operator
import textwrap

from .. import _ffi
from ..errors import TileLangError, TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from . import compat as _compat
from . import loop_exits as _exits
from .ast import AttrSpec, DType, KernelSpec, LoopSpec, RegionSpec, TensorSpec, simplify
from .expr import Expr, const

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne}
_counter = itertools.count()


_BOUND = object()  # as_let: the name was bound to a Python value, no IR to emit


def _index_dtype(*extents):
    """The dtype of an index over `extents`: int64 when any of them is, else int32."""
    return "int64" if any(getattr(e, "dtype", "") == "int64" for e in extents) else "int32"


class _Located(Exception):
    """Internal: an error already formatted with its location."""


class Parser(_exits.LoopExitParsing):
    def __init__(self, filename, line_offset, globals_, locals_):
        self.filename = filename
        self.line_offset = line_offset
        self.globals = globals_
        self.scopes = [dict(locals_)]
        self.ctx = None
        self.loops = []  # per enclosing loop: its LoopExits, or None when its body has no break/continue
        self.ws_groups = None  # the warp groups of the enclosing `with T.ws(...)`, if any

    # ---- errors and spans ----------------------------------------------------------------------------
    def span(self, node):
        return (self.filename, node.lineno + self.line_offset, node.col_offset + 1)

    def error(self, node, msg, cls=TileLangSyntaxError):
        return builder.error_at(self.span(node), msg, cls)

    def located(self, node, fn, *args):
        """Runs fn; a TileLangError without a location gets this node's location."""
        try:
            return fn(*args)
        except TileLangError as e:
            if e.span is not None:
                raise
            raise self.error(node, str(e), type(e)) from None

    # ---- names -----------------------------------------------------------------------------------------
    def lookup(self, node, name):
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        if name in self.globals:
            return self.globals[name]
        if name == "range":
            from . import serial

            return serial
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.error(node, f"name '{name}' is not defined")

    def bind(self, name, value):
        self.scopes[-1][name] = value

    # ---- function ------------------------------------------------------------------------------------------
    def parse_function(self, fdef):
        params = []
        for arg in fdef.args.args:
            if arg.annotation is None:
                raise self.error(arg, f"parameter '{arg.arg}' needs an annotation such as T.Tensor((M, N), \"float16\")")
            spec = self.eval(arg.annotation)
            if isinstance(spec, TensorSpec):
                shape = self.located(arg, lambda s=spec: [const(d) for d in s.shape])
                buf = self.located(arg, _ffi.buffer, arg.arg, spec.dtype, shape, "global", self.span(arg))
                params.append((_ffi.var(arg.arg, "handle"), buf))
                self.bind(arg.arg, buf)
            elif spec is _compat.ptr:
                p = _compat.PtrParam(arg.arg, self.span(arg))
                params.append(p)
                self.bind(arg.arg, p)
            elif isinstance(spec, DType) or isinstance(spec, str):
                v = _ffi.var(arg.arg, str(spec))
                params.append((v, None))
                self.bind(arg.arg, v)
                if self.ctx is not None:
                    self.ctx.scalar_params[arg.arg] = v
            else:
                raise self.error(arg.annotation, f"annotation of parameter '{arg.arg}' must be T.Tensor(shape, dtype), "
                                 "T.Buffer(shape, dtype) or a scalar type such as T.int32", TileLangTypeError)
        if fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            raise self.error(fdef, "a T.prim_func takes only positional tensor and scalar parameters")
        if self.ctx is not None:
            self.ctx.in_prim_func_body = True  # T.dynamic is refused from here on
        body = self.block(fdef.body)
        for i, p in enumerate(params):
            if isinstance(p, _compat.PtrParam):
                if p.buffer is None:
                    raise builder.error_at(p.span, f"pointer parameter '{p.name}' is never given a tensor: write "
                                           f"`X = T.make_tensor({p.name}, shape, dtype)`", TileLangTypeError)
                params[i] = (_ffi.var(p.name, "handle"), p.buffer)
        ctx = builder.current()
        if ctx is not None and ctx.size_vars:  # scalar parameters a T.make_tensor shape names: checked at call time
            ctx.attrs["tl.tensor_size_params"] = ",".join(sorted(ctx.size_vars))
        return _ffi.prim_func(fdef.name, params, body, dict(ctx.attrs) if ctx else {}, self.span(fdef))

    # ---- statements ------------------------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        stmts = list(stmts)
        i = 0
        while i < len(stmts):
            st = stmts[i]
            if isinstance(st, ast.If):
                # An `if` on a Python value is decided now; its taken branch is spliced into this block,
                # so that a name it binds (in either branch) is defined after the `if`.
                self.ctx.span = self.span(st)
                cond = self.at_statement(st, self.eval, st.test)
                if not (isinstance(cond, Expr) and _ffi.const_int(cond) is None):
                    taken = st.body if self.apply(st.test, bool, cond) else st.orelse
                    stmts[i:i + 1] = list(taken)
                    continue
                out.extend(self.stmt(st, cond=cond))
                i += 1
                if self.guard_rest(st, stmts[i:], out):
                    break
                continue
            let = self.at_statement(st, self.as_let, st)
            if let is _BOUND:
                i += 1
                continue
            if let is not None:
                var, value, node = let
                self.scopes.append({})
                self.bind(node.targets[0].id if isinstance(node, ast.Assign) else node.target.id, var)
                rest = self.block(stmts[i + 1:])
                self.scopes.pop()
                if isinstance(var, _ffi.Buffer):  # a tensor at a table address (compat._bound_tensor)
                    out.append(_ffi.attr_stmt(var, "tl.buffer_bind", value, rest, self.span(node)))
                else:
                    out.append(_ffi.let(var, value, rest, self.span(node)))
                break
            out.extend(self.stmt(st))
            i += 1
            if self.guard_rest(st, stmts[i:], out):
                break
        return _ffi.seq(out, None)

    def as_let(self, st):
        """`x = <IR expression>` binds x for the rest of the block; `x = <Python value or buffer>`
        binds x while parsing and returns _BOUND (nothing to emit)."""
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            name = st.targets[0].id
            target = self.try_lookup(name)
            if isinstance(target, _ffi.Buffer) and target.scope == "local.var":
                return None
            self.set_pending(name)
            value = self.eval(st.value)
            self.set_pending(None)
            if isinstance(value, LoopSpec) and value.kind == "thread_binding":
                # `tx = T.thread_binding(0, n, thread="threadIdx.x")` as a value: the thread index (+ start)
                start = value.ranges[0][0]
                value = self.located(st, _compat.get_thread_binding, value.thread_dim)
                if _ffi.const_int(start) != 0:
                    value = value + start
            if isinstance(value, Expr) and not isinstance(value, (_ffi.IntImm, _ffi.FloatImm)) \
                    and value.kind != 2:  # not a StringImm
                return _ffi.var(name, value.dtype), value, st
            bound = [(b, a) for b, a in self.ctx.bound_tensors if b is value]
            if bound:  # A = T.make_tensor(table[i], shape, dtype): bound for the rest of the block
                self.ctx.bound_tensors = [(b, a) for b, a in self.ctx.bound_tensors if b is not value]
                return value, bound[0][1], st
            self.bind(name, value)
            return _BOUND
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            dtype = self.eval(st.annotation)
            value = self.located(st, const, self.eval(st.value))
            value = self.located(st, _ffi.cast, str(dtype), value)
            return _ffi.var(st.target.id, value.dtype), value, st
        return None

    def try_lookup(self, name):
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return self.globals.get(name)

    def set_pending(self, name):
        self.ctx.pending_name = name

    def stmt(self, st, **kw):
        self.ctx.span = self.span(st)
        method = getattr(self, "stmt_" + type(st).__name__, None)
        if method is None:
            raise self.error(st, f"unsupported Python construct '{type(st).__name__}' inside a T.prim_func")
        r = self.at_statement(st, method, st, **kw)
        return [] if r is None else r if isinstance(r, list) else [r]

    def at_statement(self, st, fn, *args, **kw):
        """fn(*args, **kw), with any error it raises located at statement `st` (unless it has a location)."""
        try:
            return fn(*args, **kw)
        except TileLangError as e:
            if e.span is not None:
                raise
            raise self.error(st, str(e), type(e)) from None  # give it this statement's location
        except RecursionError:
            raise self.error(st, "this statement nests too deeply for the parser (an expression of thousands of "
                             "operations?); split it with intermediate variables") from None
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError, OverflowError,
                StopIteration) as e:
            # A plain Python mistake evaluated while parsing (`T.copy(*3)`, `x[5]` of a 2-tuple, ...).
            raise self.error(st, f"{type(e).__name__} while evaluating this statement: {e}") from None

    def stmt_Pass(self, st):
        return None

    def stmt_Assign(self, st):
        # Plain names were handled by as_let; here: stores, var buffers and tuple unpacking.
        if len(st.targets) != 1:
            raise self.error(st, "chained assignment is not supported inside a T.prim_func")
        target = st.targets[0]
        if isinstance(target, ast.Name):
            buf = self.try_lookup(target.id)
            if isinstance(buf, _ffi.Buffer) and buf.scope == "local.var":
                value = self.eval(st.value)
                return self.located(st, self.store, st, buf, [const(0)], value)
            return None  # already bound by as_let
        value = self.eval(st.value)
        return self.assign_target(st, target, value)

    def assign_target(self, st, target, value):
        if isinstance(target, ast.Subscript):
            obj = self.eval_subscripted(target.value)
            if not isinstance(obj, _ffi.Buffer):
                raise self.error(target, "only buffer elements can be assigned inside a T.prim_func")
            idx = self.indices(target, obj)
            if any(isinstance(i, slice) for i in idx):
                raise self.error(target, f"slice assignment to '{obj.name}' is not supported; use T.fill / T.copy or "
                                 "a T.Parallel loop")
            return self.located(st, self.store, st, obj, idx, value)
        if isinstance(target, (ast.Tuple, ast.List)):
            try:
                vals = list(value)
            except TypeError:
                raise self.error(st, "cannot unpack a non-sequence inside a T.prim_func") from None
            if len(vals) != len(target.elts):
                raise self.error(st, f"cannot unpack {len(vals)} values into {len(target.elts)} names")
            out = []
            for t, v in zip(target.elts, vals):
                if isinstance(t, ast.Name):
                    self.bind(t.id, v)
                else:
                    out.extend(self.assign_target(st, t, v) or [])
            return out
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
            return None
        raise self.error(target, f"cannot assign to {type(target).__name__} inside a T.prim_func")

    def store(self, st, buf, idx, value):
        if len(idx) != len(buf.shape):
            raise TileLangTypeError(f"buffer '{buf.name}' has {len(buf.shape)} dimensions but the store gives "
                                    f"{len(idx)} indices")
        v = const(value)
        if v.dtype != buf.dtype:
            v = _ffi.cast(buf.dtype, v)
        return _ffi.store(buf, v, [const(i) for i in idx], self.span(st))

    def stmt_AugAssign(self, st):
        op = _BINOPS.get(type(st.op))
        if op is None:
            raise self.error(st, f"unsupported augmented assignment {type(st.op).__name__}")
        if isinstance(st.target, ast.Name):
            cur = self.lookup(st.target, st.target.id)
            if isinstance(cur, _ffi.Buffer) and cur.scope == "local.var":
                val = self.located(st, op, _ffi.load(cur, [const(0)]), self.eval(st.value))
                return self.located(st, self.store, st, cur, [const(0)], val)
            if isinstance(cur, Expr) and not isinstance(cur, (_ffi.IntImm, _ffi.FloatImm)):
                raise self.error(st, f"'{st.target.id}' is an immutable kernel value; allocate it with "
                                 "T.alloc_var(dtype) to update it in place")
            self.bind(st.target.id, self.located(st, op, cur, self.eval(st.value)))
            return None
        if isinstance(st.target, ast.Subscript):
            obj = self.eval_subscripted(st.target.value)
            if not isinstance(obj, _ffi.Buffer):
                raise self.error(st.target, "only buffer elements can be updated inside a T.prim_func")
            idx = self.indices(st.target, obj)
            cur = self.located(st, self.load, st.target, obj, idx)
            val = self.located(st, op, cur, self.eval(st.value))
            return self.located(st, self.store, st, obj, idx, val)
        raise self.error(st, "unsupported augmented assignment target")

    def stmt_AnnAssign(self, st):
        if st.value is None:
            raise self.error(st, "a bare annotation declares nothing; give it a value")
        return None  # handled by as_let

    def stmt_Expr(self, st):
        if isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            return None  # docstring
        value = self.eval(st.value)
        if value is None:
            return None
        if isinstance(value, _ffi.Stmt):
            return value
        if isinstance(value, KernelSpec):
            raise self.error(st, "T.Kernel must be used as `with T.Kernel(...) as bx:`")
        if isinstance(value, Expr):
            return _ffi.evaluate(value, self.span(st))
        raise self.error(st, "this expression has no effect inside a T.prim_func")

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
            from .compat import get_thread_binding

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
        if len(st.items) != 1:
            raise self.error(st, "use one context manager per `with` inside a T.prim_func")
        item = st.items[0]
        spec = self.eval(item.context_expr)
        if isinstance(spec, AttrSpec):
            if item.optional_vars is not None:
                raise self.error(item.optional_vars, "`with T.attr(...)` binds no names")
            return _ffi.attr_stmt(spec.node, spec.key, spec.value, self.block(st.body), self.span(st))
        from .compat import WsSpec
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
        frame.block_vars = vars_  # T.get_block_binding
        self.ctx.kernels.append(frame)
        self.scopes.append({})
        for nm, v in zip(names, vars_):
            self.bind(nm, v)
        body = self.block(st.body)
        if frame.prologue:
            body = _ffi.seq(frame.prologue + [body], self.span(st))
        for buf, value, sp in reversed(frame.layouts):  # T.annotate_layout
            body = _ffi.attr_stmt(buf, "tl.user_layout", value, body, sp or self.span(st))
        if getattr(frame, "no_reg_alloc", False):  # T.disable_warp_group_reg_alloc()
            body = _ffi.attr_stmt(None, "tl.disable_warp_group_reg_alloc", const(1), body, self.span(st))
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

    # ---- expressions -----------------------------------------------------------------------------------------
    def eval(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported Python construct '{type(node).__name__}' inside a T.prim_func")
        return method(node)

    def expr_Constant(self, node):
        return node.value

    def eval_subscripted(self, node):
        """The object of `node[...]`: a T.alloc_var buffer stays a buffer here, so `v[0]` is its element."""
        if isinstance(node, ast.Name):
            return self.lookup(node, node.id)
        return self.eval(node)

    def expr_Name(self, node):
        v = self.lookup(node, node.id)
        if isinstance(v, _ffi.Buffer) and v.scope == "local.var":
            return _ffi.load(v, [const(0)])
        return v

    def expr_Attribute(self, node):
        obj = self.eval(node.value)
        try:
            return getattr(obj, node.attr)
        except AttributeError:
            if inspect.ismodule(obj) and obj.__name__ == "tilelang.language":
                raise self.error(node, f"T.{node.attr} is not supported by TileLang-C++ (it is not part of its "
                                 "language; README.md, \"TileLang compatibility\", lists what is)",
                                 TileLangUnsupportedError) from None
            raise self.error(node, f"'{type(obj).__name__}' object has no attribute '{node.attr}'") from None

    def expr_BinOp(self, node):
        # A long chain `a + b + c + ...` nests on its left; walk it with a loop, not recursion.
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        acc = self.eval(node)
        for n in reversed(chain):
            b = self.eval(n.right)
            op = _BINOPS.get(type(n.op))
            if op is None:
                raise self.error(n, f"unsupported operator {type(n.op).__name__}")
            acc = self.apply(n, op, acc, b)
        return acc

    def apply(self, node, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TileLangError as e:
            if e.span is not None:
                raise
            raise self.error(node, str(e), type(e)) from None
        except (TypeError, ValueError, ZeroDivisionError) as e:
            raise self.error(node, str(e), TileLangTypeError) from None

    def expr_UnaryOp(self, node):
        v = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            return self.apply(node, _ffi.logical_not, const(v)) if isinstance(v, Expr) else not v
        ops = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
        return self.apply(node, ops[type(node.op)], v)

    def expr_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        result = None
        for value_node in node.values:
            v = self.eval(value_node)
            if result is None:
                result = v
            elif isinstance(result, Expr) or isinstance(v, Expr):
                result = self.apply(node, _ffi.binary, "and" if is_and else "or", const(result), const(v))
            else:
                result = (result and v) if is_and else (result or v)
            if not isinstance(result, Expr) and ((is_and and not result) or (not is_and and result)):
                return result
        return result

    def expr_Compare(self, node):
        left = self.eval(node.left)
        result = None
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp)
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                if isinstance(left, Expr) or isinstance(right, Expr):
                    raise self.error(node, f"'{type(op).__name__}' cannot compare kernel values")
                r = {ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
                     ast.NotIn: lambda a, b: a not in b}[type(op)](left, right)
            else:
                r = self.apply(node, _CMPOPS[type(op)], left, right)
            result = r if result is None else self.apply(node, lambda a, b: _ffi.binary("and", const(a), const(b))
                                                         if isinstance(a, Expr) or isinstance(b, Expr) else a and b,
                                                         result, r)
            left = right
        return result

    def expr_IfExp(self, node):
        c = self.eval(node.test)
        if isinstance(c, Expr) and _ffi.const_int(c) is None:
            return self.apply(node, _ffi.select, c, const(self.eval(node.body)), const(self.eval(node.orelse)))
        return self.eval(node.body) if c else self.eval(node.orelse)

    def expr_Lambda(self, node):
        """`lambda i, j: ...` (the index functions of T.Layout and T.Fragment): a Python callable that evaluates
        its body with this parser, the arguments bound in a new scope."""
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            raise self.error(node, "a lambda inside a T.prim_func takes plain positional parameters only")
        names = [x.arg for x in a.args]

        def fn(*args):
            if len(args) != len(names):
                raise TypeError(f"the lambda at line {node.lineno} takes {len(names)} argument(s), got {len(args)}")
            self.scopes.append(dict(zip(names, args)))
            try:
                return self.eval(node.body)
            finally:
                self.scopes.pop()

        return fn

    def expr_Tuple(self, node):
        return tuple(self.eval(e) for e in node.elts)

    def expr_List(self, node):
        return [self.eval(e) for e in node.elts]

    def expr_Dict(self, node):
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    # Comprehensions run while the program is parsed, over Python sequences (`sum(s for s in sizes)`,
    # `[A[i, k] for k in range(4)]`); their elements may be IR expressions.
    def _comprehension(self, node, make):
        out = []

        def bind(target, v):
            if isinstance(target, ast.Name):
                self.bind(target.id, v)
            elif isinstance(target, (ast.Tuple, ast.List)):
                vals = list(v)
                if len(vals) != len(target.elts):
                    raise self.error(target, f"cannot unpack {len(vals)} values into {len(target.elts)} names")
                for t, x in zip(target.elts, vals):
                    bind(t, x)
            else:
                raise self.error(target, "a comprehension inside a T.prim_func binds names only")

        def run(i):
            if i == len(node.generators):
                out.append(make())
                return
            g = node.generators[i]
            it = self.eval(g.iter)
            if isinstance(it, LoopSpec):  # `range(4)` inside a T.prim_func is a T.serial spec
                it = self._static_values(g.iter, it)
            if isinstance(it, Expr) or g.is_async:
                raise self.error(g.iter, "a comprehension inside a T.prim_func runs while the program is parsed: "
                                 "it iterates over a Python sequence (use T.serial / T.Parallel for a loop of "
                                 "the kernel)")
            for v in it:
                self.scopes.append({})
                try:
                    bind(g.target, v)
                    keep = True
                    for c in g.ifs:
                        cv = self.eval(c)
                        if isinstance(cv, Expr) and _ffi.const_int(cv) is None:
                            raise self.error(c, "the condition of a comprehension inside a T.prim_func must be "
                                             "known while the program is parsed")
                        keep = keep and bool(cv)
                    if keep:
                        run(i + 1)
                finally:
                    self.scopes.pop()

        run(0)
        return out

    def _static_values(self, node, spec):
        """The values of a loop spec with constant bounds, for a comprehension (`for k in range(4)`)."""
        axes = []
        for d, (mn, ext) in enumerate(spec.ranges):
            lo, n = _ffi.const_int(const(mn)), _ffi.const_int(const(ext))
            if lo is None or n is None:
                raise self.error(node, "a comprehension inside a T.prim_func iterates over constant bounds")
            step = spec.steps[d] if spec.steps and d < len(spec.steps) else None
            if step is not None:
                start, stride = (_ffi.const_int(const(x)) for x in step)
                axes.append([start + k * stride for k in range(n)])
            else:
                axes.append([lo + k for k in range(n)])
        return axes[0] if len(axes) == 1 else list(itertools.product(*axes))

    def expr_ListComp(self, node):
        return self._comprehension(node, lambda: self.eval(node.elt))

    def expr_GeneratorExp(self, node):  # evaluated eagerly: the values are consumed while parsing
        return iter(self._comprehension(node, lambda: self.eval(node.elt)))

    def expr_SetComp(self, node):
        return set(self._comprehension(node, lambda: self.eval(node.elt)))

    def expr_DictComp(self, node):
        return dict(self._comprehension(node, lambda: (self.eval(node.key), self.eval(node.value))))

    def expr_Call(self, node):
        fn = self.eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value)
                if not isinstance(v, (list, tuple, range, dict)) and not inspect.isgenerator(v):
                    raise self.error(a, f"the argument after * must be a Python list or tuple, not "
                                     f"{type(v).__name__}")
                args.extend(v)
            else:
                args.append(self.eval(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                v = self.eval(k.value)
                if not isinstance(v, dict):
                    raise self.error(k.value, f"the argument after ** must be a dict, not {type(v).__name__}")
                kwargs.update(v)
            else:
                kwargs[k.arg] = self.eval(k.value)
        if isinstance(fn, KernelSpec) or isinstance(fn, _ffi.Buffer):
            raise self.error(node, f"'{type(fn).__name__}' object is not callable")
        self.ctx.span = self.span(node)
        return self.apply(node, fn, *args, **kwargs)

    def expr_Subscript(self, node):
        obj = self.eval_subscripted(node.value)
        if isinstance(obj, _ffi.Buffer):
            idx = self.indices(node, obj)
            return self.located(node, self.load, node, obj, idx)
        key = self.eval(node.slice)
        return self.apply(node, operator.getitem, obj, key)

    def expr_Slice(self, node):
        return slice(self.eval(node.lower) if node.lower else None, self.eval(node.upper) if node.upper else None,
                     self.eval(node.step) if node.step else None)

    def indices(self, node, buf):
        sl = node.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out = []
        for e in elts:
            out.append(self.expr_Slice(e) if isinstance(e, ast.Slice) else self.eval(e))
        if len(out) != len(buf.shape):
            raise self.error(node, f"buffer '{buf.name}' has {len(buf.shape)} dimensions but is indexed with "
                             f"{len(out)} indices", TileLangTypeError)
        return out

    def load(self, node, buf, idx):
        if not any(isinstance(i, slice) for i in idx):
            for i in idx:
                if isinstance(i, float) or (isinstance(i, Expr) and "float" in i.dtype):
                    raise TileLangTypeError(f"buffer '{buf.name}' is indexed with a floating-point value")
            return _ffi.load(buf, [const(i) for i in idx])
        mins, exts, sliced = [], [], []
        for d, i in enumerate(idx):
            if isinstance(i, slice):
                if i.step is not None:
                    raise TileLangSyntaxError(f"strided slices of buffer '{buf.name}' are not supported")
                for bound in (i.start, i.stop):
                    if isinstance(bound, float) or (isinstance(bound, Expr) and "float" in bound.dtype):
                        raise TileLangTypeError(f"slice {d} of buffer '{buf.name}' has a floating-point bound")
                lo = const(0) if i.start is None else const(i.start)
                hi = buf.shape[d] if i.stop is None else const(i.stop)
                ext = simplify(hi - lo)
                c = _ffi.const_int(ext)
                if c is not None and c <= 0:
                    raise TileLangTypeError(f"slice {d} of buffer '{buf.name}' is empty (extent {c})")
                mins.append(lo)
                exts.append(ext)
                sliced.append(True)
            else:
                mins.append(const(i))
                exts.append(const(1))
                sliced.append(False)
        return RegionSpec(buf, mins, exts, sliced)

    def expr_JoinedStr(self, node):
        return "".join(str(self.eval(v)) if not isinstance(v, ast.Constant) else v.value for v in node.values)

    def expr_FormattedValue(self, node):
        return self.eval(node.value)


def _find_function(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def function_source(fn, what):
    """(filename, first line, indent, the function's AST) of a Python function, with the file's text
    registered for error carets. `what` names it in errors ("'f'", "macro 'm'")."""
    try:
        filename = inspect.getsourcefile(fn) or "<unknown>"
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise TileLangSyntaxError(f"cannot read the source of {what}: {e}") from None
    indent = len(lines[0]) - len(lines[0].lstrip())
    _ffi.register_source(filename, "".join(linecache.getlines(filename)) or "".join(lines))
    fdef = _find_function(_split_chained_assignments(ast.parse(textwrap.dedent("".join(lines)))), fn.__name__)
    return filename, start, indent, fdef


def _split_chained_assignments(tree):
    """`a = b = v` as Python runs it: v evaluated once into a hidden name, then assigned to each target
    from left to right (`BK = BV = block_T`, `x = y = A[i] * 2`)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not any(isinstance(s, ast.Assign) and len(s.targets) > 1 for s in body):
                continue
            out = []
            for st in body:
                if not (isinstance(st, ast.Assign) and len(st.targets) > 1):
                    out.append(st)
                    continue
                tmp = f"_tl_chain_{st.lineno}_{st.col_offset}"
                out.append(ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=st.value), st))
                for t in st.targets:
                    name = ast.copy_location(ast.Name(tmp, ast.Load()), st)
                    out.append(ast.copy_location(ast.Assign(targets=[t], value=name), st))
            setattr(node, field, out)
    return tree


def parse(fn, globals_=None, locals_=None, parser_cls=None, setup=None):
    """Parses a Python function object into a PrimFunc. `parser_cls` / `setup(parser)` let the eager
    @tilelang.jit style parse the same way with its own parameter handling."""
    filename, start, indent, fdef = function_source(fn, f"'{fn.__name__}'")
    if fdef is None:
        raise TileLangSyntaxError(f"cannot find the definition of '{fn.__name__}'")
    g = dict(fn.__globals__) if globals_ is None else globals_
    loc = dict(locals_ or {})
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                loc[name] = cell.cell_contents
            except ValueError:
                pass
    p = (parser_cls or Parser)(filename, start - 1, g, loc)
    # Columns come from the dedented text; shift them back to the file's columns.
    p.span = lambda node, _p=p: (filename, node.lineno + start - 1, node.col_offset + 1 + indent)
    with builder.scope() as ctx:
        p.ctx = ctx
        ctx.parser = p
        if setup is not None:
            setup(p)
        return p.parse_function(fdef)


def prim_func(fn=None, *, private=False):
    """Decorator: turns a Python function written in the DSL into a PrimFunc (IR)."""
    def wrap(f):
        frame = inspect.currentframe().f_back
        caller_locals = dict(frame.f_locals) if frame is not None else {}
        return parse(f, None, caller_locals)

    if fn is None:
        return wrap
    frame = inspect.currentframe().f_back
    caller_locals = dict(frame.f_locals) if frame is not None else {}
    return parse(fn, None, caller_locals)


def parse_source(text, name=None, extra_globals=None):
    """Parses DSL source text (for example the printer's output) into a PrimFunc."""
    filename = f"<tilelang-source-{next(_counter)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _ffi.register_source(filename, text)
    import tilelang.language as T

    g = {"T": T, "__name__": "__tilelang_parsed__"}
    if extra_globals:
        g.update(extra_globals)
    code = compile(text, filename, "exec")
    exec(code, g)  # runs the module: `m = T.dynamic(...)` lines, then the decorated def
    funcs = [v for v in g.values() if isinstance(v, _ffi.PrimFunc)]
    if name is not None:
        funcs = [f for f in funcs if f.name == name]
    if not funcs:
        raise TileLangSyntaxError("no @T.prim_func found in the source text")
    return funcs[-1]
