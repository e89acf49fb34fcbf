"""The front end: walks the Python AST of a @T.prim_func and builds IR through the C++ builder.

Python values (ints, tuples, Python-level `if` conditions, loops over lists) are evaluated while
parsing; IR values become IR. Every error carries file:line:col of the user's source.
"""
import ast
import builtins
import inspect
import itertools
import linecache

from .. import _ffi
from ..errors import TileLangError, TileLangSyntaxError, TileLangTypeError
from . import builder
from . import loop_exits as _exits
from .ast import KernelSpec, LoopSpec
from .dtypes import DType
from .expr import Expr, const
from .kernel import get_thread_binding
from .loop import serial
from .parser_control import ControlParsing
from .parser_expr import _BINOPS, ExprParsing
from .proxy import PtrParam, TensorSpec, ptr
from .source import function_source
from .ws_schedule import WSID, WsOpSpec

_counter = itertools.count()
_namespace = None  # the T namespace for parse_source: tilelang.language hands itself over (it imports this module)


_BOUND = object()  # as_let: the name was bound to a Python value, no IR to emit


class _Located(Exception):
    """Internal: an error already formatted with its location."""


class Parser(ControlParsing, ExprParsing, _exits.LoopExitParsing):
    def __init__(self, filename, line_offset, globals_, locals_):
        self.filename = filename
        self.line_offset = line_offset
        self.globals = globals_
        self.scopes = [dict(locals_)]
        self.let_values = []  # (var, value) of the kernel lets in scope, innermost last
        self.ctx = None
        self.loops = []  # per enclosing loop: its LoopExits, or None when its body has no break/continue
        self.ws_groups = None  # the warp groups of the enclosing `with T.ws(...)`, if any
        self.ws_op_tags = {}  # id(ast statement) -> its `with T.ws_op(id)` (ws_schedule.py), spliced into the block

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
                if getattr(spec, "strides", None) is not None and self.ctx is not None:
                    self.ctx.attrs[f"tl.param_strides.{len(params) - 1}"] = spec.strides_attr()
            elif spec is ptr:
                p = PtrParam(arg.arg, self.span(arg))
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
            if isinstance(p, PtrParam):
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
            # what evaluating this statement's expressions emits first (builder.emit_before: T.rng_rand()) goes
            # in front of it; a nested block collects its own
            saved, self.ctx.pre_stmts = self.ctx.pre_stmts, []
            mark = len(out)
            try:
                i, done = self.block_step(stmts, i, out)
            finally:
                pre, self.ctx.pre_stmts = self.ctx.pre_stmts, saved
                out[mark:mark] = pre
            if done:
                break
        return _ffi.seq(out, None)

    def block_step(self, stmts, i, out):
        """Parses stmts[i] into out: (the index to go on at, whether the rest of the block was consumed)."""
        st = stmts[i]
        op_id = self.ws_op_of(st)
        if op_id is not None:
            # `with T.ws_op(id):` is spliced into the block, each statement marked (a let stays visible after it)
            if id(st) in self.ws_op_tags:
                raise self.error(st, "T.ws_op blocks do not nest: one statement is one op of the schedule")
            for inner in st.body:
                self.ws_op_tags[id(inner)] = (op_id, self.span(st))
            stmts[i:i + 1] = list(st.body)
            return i, False
        tag = self.ws_op_tags.pop(id(st), None)
        if tag is not None:
            mark = len(out)
            r = self.block_step(stmts, i, out)
            out[mark:] = [_ffi.attr_stmt(None, WSID, _ffi.string_imm(tag[0]), x, tag[1]) for x in out[mark:]]
            return r
        if isinstance(st, ast.If):
            # An `if` on a Python value is decided now; its taken branch is spliced into this block,
            # so that a name it binds (in either branch) is defined after the `if`.
            self.ctx.span = self.span(st)
            cond = self.at_statement(st, self.eval, st.test)
            if not (isinstance(cond, Expr) and _ffi.const_int(cond) is None):
                taken = st.body if self.apply(st.test, bool, cond) else st.orelse
                stmts[i:i + 1] = list(taken)
                return i, False
            out.extend(self.stmt(st, cond=cond))
            return i + 1, self.guard_rest(st, stmts[i + 1:], out)
        let = self.at_statement(st, self.as_let, st)
        if let is _BOUND:
            return i + 1, False
        if let is not None:
            var, value, node = let
            self.scopes.append({})
            self.bind(node.targets[0].id if isinstance(node, ast.Assign) else node.target.id, var)
            self.let_values.append((var, value))
            try:
                rest = self.block(stmts[i + 1:])
            finally:
                self.let_values.pop()
            self.scopes.pop()
            if isinstance(var, _ffi.Buffer):  # a tensor at a table address (proxy._bound_tensor)
                out.append(_ffi.attr_stmt(var, "tl.buffer_bind", value, rest, self.span(node)))
            else:
                out.append(_ffi.let(var, value, rest, self.span(node)))
            return i + 1, True
        out.extend(self.stmt(st))
        return i + 1, self.guard_rest(st, stmts[i + 1:], out)

    def ws_op_of(self, st):
        """The id of `with T.ws_op(id):` (a single item, no `as`), else None."""
        if not (isinstance(st, ast.With) and len(st.items) == 1 and st.items[0].optional_vars is None):
            return None
        f = st.items[0].context_expr
        f = f.func if isinstance(f, ast.Call) else None
        if not ((isinstance(f, ast.Attribute) and f.attr == "ws_op") or (isinstance(f, ast.Name) and f.id == "ws_op")):
            return None
        spec = self.at_statement(st, self.eval, st.items[0].context_expr)
        return spec.op_id if isinstance(spec, WsOpSpec) else None

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
                value = self.located(st, get_thread_binding, value.thread_dim)
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
            if isinstance(dtype, type) or getattr(dtype, "__module__", "") == "typing":
                # `dtype: str = T.bfloat16`, `n: int = 4`: a Python annotation, a plain parse-time assignment
                self.bind(st.target.id, self.eval(st.value))
                return _BOUND
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
            red = self.ctx.kernels[-1].reducers if self.ctx.kernels else {}
            if obj.name in red and any(b is obj for b in self.ctx.kernels[-1].allocs):
                # a T.alloc_reducer element: the update is an atomic add (many threads add into it)
                if not isinstance(st.op, ast.Add):
                    raise self.error(st, f"a sum reducer ('{obj.name}') is updated with +=, not "
                                     f"{type(st.op).__name__}")
                from .atomic import atomic_add
                return self.located(st, atomic_add, _ffi.load(obj, [const(i) for i in idx]), self.eval(st.value))
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
    g = {"T": _namespace, "__name__": "__tilelang_parsed__"}
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
