"""The eager @tilelang.jit style (TileLang's current way of writing kernels): the decorated function's
body *is* the kernel.

    @tilelang.jit(target="cpu")
    def add(A, B, block=128):
        N = T.const("N")                 # a size, bound from the arguments' shapes at call time
        A: T.Tensor((N,), T.float32)     # A and B are tensor parameters (annotation statements)
        B: T.Tensor((N,), T.float32)
        C = T.empty((N,), T.float32)     # an output, allocated on each call and returned
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            ...
        return C

    C = add(a, b)                        # compiles once per (constants, sizes), then runs
    kernel = add.compile(N=1000)         # the kernel, without running it

Parameters annotated `T.Tensor(...)` / `T.Buffer(...)` (in the signature or by an annotation statement
in the body) are tensors; parameters annotated with a scalar dtype (`alpha: T.float32`) are run-time
scalars; every other parameter is a compile-time constant. A `T.const` size takes its value from the
first tensor parameter whose annotated shape names it directly; the kernel is specialised to that value
(as in TileLang). `T.dynamic` sizes stay symbolic.

How it works: the body is parsed by the ordinary front end (language/parser.py) with an EagerParser
that declares parameters as their annotation statements run. On the first call for a set of
constants, `T.const` returns placeholder symbols; the annotation that first names one binds it from the
argument's shape, and the parse restarts with every size known. Which parameter and dimension bind
each size is remembered, so later calls compute the cache key from the shapes without parsing.
"""
import ast
import functools
import inspect
import textwrap

import numpy as np

from .. import _ffi
from ..errors import TileLangArgumentError, TileLangError, TileLangTypeError, TileLangUnsupportedError
from ..language import builder
from ..language.dtypes import DType, dtype_str
from ..language.expr import const
from ..language.parser import _BOUND, Parser, parse
from ..language.proxy import PtrParam, TensorSpec, ptr


class _Restart(Exception):
    """Internal: every T.const size is now known; parse again with the values."""


# ---- deciding the style --------------------------------------------------------------------------------------
def _walk_body(stmts):
    """Statements and expressions of a function body, not descending into nested definitions."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    todo = [s for s in stmts if not isinstance(s, nested)]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, nested))


def _attr_name(node):
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_tensor_annotation(node):
    """`T.Tensor(...)`, `T.Buffer[...]`, `T.Tensor` (syntactically)."""
    if isinstance(node, (ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return _attr_name(node) in ("Tensor", "Buffer", "StridedTensor")


def _function_def(fn):
    try:
        lines, _ = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == fn.__name__:
            return node
    return None


def is_eager_style(fn):
    """True when fn's body is a kernel (T.Kernel / T.const / T.empty / tensor annotation statements at
    its own level), False for a factory returning a @T.prim_func."""
    fdef = _function_def(fn)
    if fdef is None:
        return False
    for node in _walk_body(fdef.body):
        if isinstance(node, ast.AnnAssign) and node.value is None and _is_tensor_annotation(node.annotation):
            return True
        if isinstance(node, ast.With) and any(isinstance(i.context_expr, ast.Call)
                                              and _attr_name(i.context_expr.func) == "Kernel" for i in node.items):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("const", "empty") \
                and _attr_name(node.func.value) == "T":
            return True
    return False


# ---- the parse ---------------------------------------------------------------------------------------------------
class _ParseState:
    """What one parse of an eager function knows and learns."""

    def __init__(self, jit, constants, tensors, const_values):
        self.jit = jit
        self.constants = constants  # name -> Python value of the compile-time parameters
        self.tensors = tensors  # name -> the argument (may be absent: compile without tensors)
        self.const_values = dict(const_values)  # T.const name -> int
        self.placeholders = {}  # T.const name -> placeholder Var (first pass only)
        self.requested = []  # every T.const name, in order
        self.matcher = {}  # T.const name -> (param, dim) that bound it
        self.declared = {}  # param name -> (Var, Buffer or None)
        self.outputs = []  # T.empty buffers, in creation order
        self.output_spans = {}  # output name -> (file, line, col) of its T.empty
        self.returned = None  # the buffers of the return statement, or None
        self.return_is_tuple = False
        self.pass_configs = {}  # from T.annotate_pass_configs
        self.ptrs = {}  # `p: T.ptr` parameter name -> PtrParam (its tensor from T.make_tensor)

    # T.const
    def const(self, names, dtype):
        if dtype_str(dtype) not in ("int32", "int64"):
            raise TileLangTypeError(f"T.const declares integer sizes; dtype {dtype_str(dtype)} is not one")
        out = []
        for n in names:
            if n not in self.requested:
                self.requested.append(n)
            if n in self.const_values:
                out.append(self.const_values[n])
            else:
                v = self.placeholders.get(n)
                if v is None:
                    v = self.placeholders[n] = _ffi.var(n, dtype_str(dtype))
                out.append(v)
        return out[0] if len(out) == 1 else tuple(out)

    def bind_shape(self, name, spec):
        """Binds placeholders named directly by a tensor annotation from the argument's shape."""
        arg = self.tensors.get(name)
        hit = False
        for d, dim in enumerate(spec.shape):
            for cname, v in self.placeholders.items():
                if dim is v and cname not in self.matcher:
                    if arg is None:
                        continue
                    shape = _shape_of(arg)
                    if d >= len(shape):
                        raise TileLangArgumentError(
                            f"argument '{name}' of '{self.jit.__name__}' has {len(shape)} dimensions but its annotation "
                            f"declares {len(spec.shape)}")
                    self.matcher[cname] = (name, d)
                    self.const_values[cname] = int(shape[d])
                    hit = True
        if hit and all(c in self.const_values for c in self.placeholders):
            raise _Restart()


def _shape_of(x):
    shape = getattr(x, "shape", None)
    if shape is None:
        raise TileLangArgumentError(f"expected a tensor (NumPy array, torch tensor), got {type(x).__name__}")
    return tuple(int(s) for s in shape)


class EagerParser(Parser):
    """Parses the body of an eager @tilelang.jit function (see the module docstring)."""

    state = None

    def parse_function(self, fdef):
        st = self.state
        for arg in fdef.args.args + fdef.args.kwonlyargs:
            name = arg.arg
            kind = st.jit.param_kind[name]
            if kind == "tensor" and arg.annotation is not None:
                spec = self.eval(arg.annotation)
                self.declare(arg, name, spec)
            elif kind == "scalar":
                dt = dtype_str(self.eval(arg.annotation))
                v = _ffi.var(name, dt)
                st.declared[name] = (v, None)
                self.bind(name, v)
                self.ctx.scalar_params[name] = v
            elif kind == "ptr":  # `A: T.ptr`: T.make_tensor(A, shape, dtype) in the body gives its tensor
                p = PtrParam(name, self.span(arg))
                st.ptrs[name] = p
                self.bind(name, p)
            elif kind == "const":
                self.bind(name, st.constants[name])
        if fdef.args.vararg or fdef.args.kwarg:
            raise self.error(fdef, "an eager @tilelang.jit function takes named parameters only (no *args / **kwargs)")
        body = self.block(fdef.body)
        for name, p in st.ptrs.items():
            if p.buffer is None:
                raise self.error(fdef, f"pointer parameter '{name}' is never given a tensor: write "
                                 f"`{name} = T.make_tensor({name}, shape, dtype)`", TileLangTypeError)
            st.declared[name] = (_ffi.var(name, "handle"), p.buffer)
        missing = [n for n, k in st.jit.param_kind.items() if k == "tensor" and n not in st.declared]
        if missing:
            raise self.error(fdef, f"tensor parameter '{missing[0]}' is never declared; add "
                             f"`{missing[0]}: T.Tensor(shape, dtype)` before the kernel")
        unbound = [n for n in st.placeholders if n not in st.const_values]
        if unbound:
            n = unbound[0]
            raise self.error(fdef, f"no value for T.const '{n}': it is not a dimension of any tensor argument given "
                             f"(name it directly in a parameter's T.Tensor shape, or pass {n}=<int>)",
                             TileLangArgumentError)
        if st.outputs and st.returned is None:
            raise self.error(fdef, f"the output '{st.outputs[0].name}' from T.empty is never returned; end the "
                             "function with `return " + ", ".join(b.name for b in st.outputs) + "`")
        params = [st.declared[n] for n in st.jit.param_kind if n in st.declared]
        params += [(_ffi.var(b.name, "handle"), b) for b in st.returned or []]
        ctx = builder.current()
        if ctx is not None and ctx.size_vars:  # scalar parameters naming tensor sizes: checked at call time
            ctx.attrs["tl.tensor_size_params"] = ",".join(sorted(ctx.size_vars))
        return _ffi.prim_func(fdef.name, params, body, dict(ctx.attrs) if ctx else {}, self.span(fdef))

    def declare(self, node, name, spec):
        st = self.state
        if not isinstance(spec, TensorSpec):
            raise self.error(node, f"the annotation of parameter '{name}' must be T.Tensor(shape, dtype)",
                             TileLangTypeError)
        if name in st.declared:
            raise self.error(node, f"parameter '{name}' is declared twice")
        if getattr(spec, "strides", None) is not None:
            raise self.error(node, f"parameter '{name}': T.StridedTensor is supported on @T.prim_func parameters, "
                             "not in eager functions", TileLangUnsupportedError)
        st.bind_shape(name, spec)
        shape = self.located(node, lambda: [self.size_dim(const(d)) for d in spec.shape])
        buf = self.located(node, _ffi.buffer, name, spec.dtype, shape, "global", self.span(node))
        st.declared[name] = (_ffi.var(name, "handle"), buf)
        self.bind(name, buf)

    def size_dim(self, d):
        """A dimension that is a run-time scalar parameter (`M: T.int32`, `A: T.Tensor((M,), ...)`) becomes a
        size bound from the tensor; the call checks that the scalar passed for M equals it."""
        ctx = self.ctx
        if isinstance(d, _ffi.Var) and ctx.scalar_params.get(d.name) is not None:
            if d.name not in ctx.size_vars:
                ctx.size_vars[d.name] = _ffi.var(d.name, d.dtype)
            return ctx.size_vars[d.name]
        return d

    def as_let(self, st):
        let = super().as_let(st)
        if isinstance(let, tuple) and isinstance(let[1], _ffi.Var) and not self.ctx.kernels:
            # `N = T.const("N")`, `m = T.dynamic("m")`: the name is the size itself, not a copy of it, so
            # that a parameter's shape can use it
            var, value, node = let
            self.bind(node.targets[0].id if isinstance(node, ast.Assign) else node.target.id, value)
            return _BOUND
        return let

    def stmt_AnnAssign(self, st):
        if st.value is None and isinstance(st.target, ast.Name) \
                and self.state.jit.param_kind.get(st.target.id) == "tensor":
            if self.ctx.kernels:
                raise self.error(st, f"declare parameter '{st.target.id}' before `with T.Kernel(...)`")
            self.declare(st, st.target.id, self.eval(st.annotation))
            return None
        return super().stmt_AnnAssign(st)

    def stmt_Return(self, st):
        s = self.state
        if self.ctx.kernels:
            raise self.error(st, "`return` inside a kernel; return the T.empty outputs at the end of the function")
        if s.returned is not None:
            raise self.error(st, "a second `return`; an eager @tilelang.jit function returns once, at its end")
        value = None if st.value is None else self.eval(st.value)
        s.return_is_tuple = isinstance(value, (tuple, list))
        vals = [] if value is None else list(value) if s.return_is_tuple else [value]
        for v in vals:
            if not isinstance(v, _ffi.Buffer) or not any(v.name == o.name for o in s.outputs) \
                    or v.name in s.declared:
                raise self.error(st, "an eager @tilelang.jit function returns outputs made with T.empty(shape, dtype); "
                                 f"this returns {type(v).__name__}", TileLangTypeError)
        names = [v.name for v in vals]
        for o in s.outputs:
            if o.name not in names:
                raise self.error(st, f"the output '{o.name}' from T.empty is not returned")
        if len(set(names)) != len(names):
            raise self.error(st, "an output is returned twice")
        s.returned = vals
        return None


# ---- the decorated function ---------------------------------------------------------------------------------
def _freeze(x):
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return ("dict",) + tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    try:
        hash(x)
    except TypeError:
        return (type(x).__name__, repr(x))
    return x


def _is_tensor_value(x):
    return isinstance(x, np.ndarray) or type(x).__module__.startswith("torch") and hasattr(x, "shape") \
        or hasattr(x, "__dlpack__")


def _annotation_from_text(text, fn):
    """A string annotation: a TensorSpec stand-in when it reads T.Tensor(...), else its value if it evaluates
    in the function's globals (T.float32 -> a scalar parameter; int -> a constant)."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    if _is_tensor_annotation(node):
        return TensorSpec((), "float32")  # only its kind matters here; the parser evaluates the real one
    if _attr_name(node) == "ptr" and not isinstance(node, ast.Call):
        return ptr
    try:
        return eval(compile(ast.Expression(node), "<annotation>", "eval"), dict(fn.__globals__))  # noqa: S307
    except Exception:
        return None


class EagerJIT:
    """What @tilelang.jit returns for an eager-style function."""

    is_eager = True

    def __init__(self, fn, target=None, execution_backend=None, pass_configs=None, verbose=False):
        self.fn = fn
        self.target = target
        self.execution_backend = execution_backend
        self.pass_configs = pass_configs
        self.verbose = verbose
        self.signature = inspect.signature(fn)
        functools.update_wrapper(self, fn)
        fdef = _function_def(fn)
        body_tensors = {n.target.id for n in _walk_body(fdef.body)
                        if isinstance(n, ast.AnnAssign) and n.value is None and isinstance(n.target, ast.Name)
                        and _is_tensor_annotation(n.annotation)}
        ann = getattr(fn, "__annotations__", {})
        self.param_kind = {}
        for name, p in self.signature.parameters.items():
            a = ann.get(name, inspect.Parameter.empty)
            if isinstance(a, str):  # `from __future__ import annotations`: classify the text
                a = _annotation_from_text(a, fn)
            if isinstance(a, TensorSpec) or name in body_tensors:
                self.param_kind[name] = "tensor"
            elif a is ptr or (isinstance(a, str) and a in ("T.ptr", "ptr")):
                self.param_kind[name] = "ptr"
            elif isinstance(a, DType) or (isinstance(a, str) and _ffi.valid_dtype(a)):
                self.param_kind[name] = "scalar"
            else:
                self.param_kind[name] = "const"
        self._matchers = {}  # constants key -> {T.const name: (param, dim)} (None: parse needed)
        self._kernels = {}  # (constants key, sizes) -> (kernel, info)
        self.cache = self._kernels
        self.jit_options = {"out_idx": None, "target": target, "execution_backend": execution_backend,
                            "pass_configs": pass_configs}

    # -- binding arguments --
    def _bind(self, args, kwargs):
        params = list(self.signature.parameters)
        if len(args) > len(params):
            raise TileLangArgumentError(f"'{self.__name__}' takes {len(params)} arguments but {len(args)} were given")
        values = dict(zip(params, args))
        extra = {}
        for k, v in kwargs.items():
            if k in values:
                raise TileLangArgumentError(f"'{self.__name__}' got two values for argument '{k}'")
            if k in self.signature.parameters:
                values[k] = v
            else:
                extra[k] = v  # a T.const size given by name
        constants, tensors, scalars = {}, {}, {}
        for name, p in self.signature.parameters.items():
            kind = self.param_kind[name]
            if name not in values:
                if p.default is not inspect.Parameter.empty and kind in ("const", "scalar"):
                    values[name] = p.default
                elif kind in ("tensor", "ptr"):
                    continue
                else:
                    raise TileLangArgumentError(f"'{self.__name__}' is missing the argument '{name}'")
            v = values[name]
            if kind == "ptr" and v is ptr:
                continue  # `A=T.ptr()`: compile without the tensor (par_compile, compile)
            if kind in ("tensor", "ptr"):
                if not _is_tensor_value(v):
                    raise TileLangArgumentError(f"argument '{name}' of '{self.__name__}' is a tensor parameter but got "
                                                f"{type(v).__name__}")
                tensors[name] = v
            elif kind == "scalar":
                scalars[name] = v
            else:
                if _is_tensor_value(v) and not isinstance(v, np.generic):
                    raise TileLangArgumentError(
                        f"argument '{name}' of '{self.__name__}' got a tensor, but '{name}' is a compile-time constant; "
                        f"declare it with `{name}: T.Tensor(shape, dtype)` in the body to make it a tensor parameter")
                constants[name] = v
        for k, v in extra.items():
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise TileLangArgumentError(f"'{self.__name__}' got an unexpected argument '{k}' (keywords that are not "
                                            "parameters give T.const sizes, which are integers)")
        return constants, tensors, scalars, {k: int(v) for k, v in extra.items()}

    def _key(self, constants):
        return tuple((k, _freeze(v)) for k, v in constants.items())

    # -- building --
    def _parse(self, constants, tensors, sizes):
        values, matcher = dict(sizes), {}
        for attempt in range(2):
            state = _ParseState(self, constants, tensors, values)
            state.matcher = dict(matcher)

            def setup(p, _state=state):
                p.state = _state
                p.ctx.eager = _state

            try:
                func = parse(self.fn, parser_cls=EagerParser, setup=setup)
            except _Restart:
                values, matcher = state.const_values, state.matcher
                continue
            except TileLangError as e:
                open_ = [n for n in state.placeholders if n not in state.const_values]
                # the note only where the error is about one of them (a NameError of another name is not)
                import re as _re
                named = [n for n in open_ if _re.search(r"\b" + _re.escape(n) + r"\b", str(e.args[0]))]
                if named and not isinstance(e, TileLangArgumentError):
                    e.args = (f"{e.args[0]}\n(note: the size{'s' if len(open_) > 1 else ''} "
                              f"{', '.join(open_)} from T.const had no value yet: no tensor argument's shape gave one; "
                              f"pass {open_[0]}=<int> or the tensor)",) + e.args[1:]
                raise
            unknown = sorted(set(sizes) - set(state.requested))
            if unknown:
                raise TileLangArgumentError(f"'{self.__name__}' got an unexpected argument '{unknown[0]}' (neither a "
                                            "parameter nor a T.const size)")
            return func, state
        raise AssertionError("eager parse did not settle")  # pragma: no cover

    def _build(self, constants, tensors, sizes, ckey):
        return self._finish(self._parse(constants, tensors, sizes), ckey)

    def _finish(self, parsed, ckey):
        """Compiles a parse's function and records how its sizes bind (the part par_compile runs in threads)."""
        func, state = parsed
        n_in = len(func.params) - len(state.returned or [])
        out_idx = list(range(n_in, len(func.params))) or None
        from .compiler import compile as _compile

        configs = {**state.pass_configs, **(self.pass_configs or {})}
        kernel = _compile(func, out_idx=out_idx, target=self.target, execution_backend=self.execution_backend,
                          pass_configs=configs, verbose=self.verbose)
        # where each output was made, for an allocation that fails at call time
        kernel.output_origins = {n_in + i: ("T.empty", state.output_spans.get(b.name))
                                 for i, b in enumerate(state.returned or [])}
        info = {"matcher": dict(state.matcher), "sizes": dict(state.const_values), "tuple": state.return_is_tuple,
                "inputs": [p[0].name for p in func.params[:n_in]]}
        self._matchers[ckey] = (info["matcher"], set(info["sizes"]))
        return kernel, info

    def _sizes_from(self, ckey, tensors, extra):
        known = self._matchers.get(ckey)
        if known is None:
            return None
        matcher, names = known
        sizes = dict(extra)
        for cname, (param, d) in matcher.items():
            if cname in sizes:
                continue
            arg = tensors.get(param)
            if arg is None:
                return None
            shape = _shape_of(arg)
            if d >= len(shape):
                raise TileLangArgumentError(f"argument '{param}' of '{self.__name__}' has {len(shape)} dimensions; "
                                            f"its annotation declares more")
            sizes[cname] = shape[d]
        return sizes if set(sizes) == names else None

    def _kernel_for(self, constants, tensors, extra):
        ckey = self._key(constants)
        sizes = self._sizes_from(ckey, tensors, extra)
        if sizes is not None:
            hit = self._kernels.get((ckey, tuple(sorted(sizes.items()))))
            if hit is not None:
                return hit
        kernel, info = self._build(constants, tensors, extra, ckey)
        key = (ckey, tuple(sorted(info["sizes"].items())))
        self._kernels[key] = (kernel, info)
        return kernel, info

    def _check_args(self, kernel, info, tensors):
        """Shapes and dtypes against the specialised kernel, with what bound each size."""
        where = {cname: f"{p}.shape[{d}]" for cname, (p, d) in info["matcher"].items()}
        for (_, buf), name in zip(kernel.func.params, info["inputs"]):
            if buf is None:
                continue
            arg = tensors[name]
            shape = _shape_of(arg)
            if len(shape) != len(buf.shape):
                raise TileLangArgumentError(f"argument '{name}' of '{self.__name__}' has {len(shape)} dimensions but "
                                            f"is declared with {len(buf.shape)}")
            for d, (got, want) in enumerate(zip(shape, buf.shape)):
                w = _ffi.const_int(want)
                if w is not None and got != w:
                    bound = [c for c, v in info["sizes"].items() if v == w and c in where and where[c] != f"{name}.shape[{d}]"]
                    why = f" (the size {bound[0]} was bound to {w} by {where[bound[0]]})" if bound else ""
                    raise TileLangArgumentError(f"argument '{name}' of '{self.__name__}': dimension {d} is {got} but the "
                                                f"kernel expects {w}{why}")

    def __call__(self, *args, **kwargs):
        constants, tensors, scalars, extra = self._bind(args, kwargs)
        missing = [n for n, k in self.param_kind.items() if k in ("tensor", "ptr") and n not in tensors]
        if missing:
            raise TileLangArgumentError(f"'{self.__name__}' is missing the tensor argument '{missing[0]}' (use "
                                        f"{self.__name__}.compile(...) to build the kernel without running it)")
        kernel, info = self._kernel_for(constants, tensors, extra)
        self._check_args(kernel, info, tensors)
        call_args = [tensors[n] if n in tensors else scalars[n] for n in info["inputs"]]
        out = kernel(*call_args)
        if info["tuple"] and not isinstance(out, (list, tuple)):
            return (out,)
        if isinstance(out, list):
            return tuple(out)
        return out

    def compile(self, *args, **kwargs):
        """The kernel for these constants (and sizes, given as T.const keywords or by tensors), without running it.
        The kernel takes the tensor and scalar parameters in signature order and returns the T.empty outputs."""
        constants, tensors, _, extra = self._bind(args, kwargs)
        return self._kernel_for(constants, tensors, extra)[0]

    def par_compile(self, configs, num_workers=None, ignore_error=False):
        """Compiles one kernel per configuration (a dict of keyword arguments or a tuple of positional ones),
        the builds in parallel threads; returns the kernels in order (None for a failed one with
        ignore_error=True). Later calls with the same constants and sizes reuse them."""
        from .parallel import compile_in_parallel

        def elaborate(cfg):
            args, kwargs = (cfg, {}) if isinstance(cfg, tuple) else ((), dict(cfg))
            constants, tensors, _, extra = self._bind(args, kwargs)
            ckey = self._key(constants)
            return self._parse(constants, tensors, extra), ckey

        def build(parsed_and_key):
            (func, state), ckey = parsed_and_key
            kernel, info = self._finish((func, state), ckey)
            self._kernels[(ckey, tuple(sorted(info["sizes"].items())))] = (kernel, info)
            return kernel

        return compile_in_parallel(list(configs), elaborate, build, num_workers, ignore_error, self.__name__)

    def parse_cache_key(self, *args, **kwargs):
        """The key this function's kernels are cached under for a call with these arguments (TileLang's
        method): its compile-time constants and the T.const sizes the call's tensors give (None for sizes
        not known before a first parse)."""
        constants, tensors, _, extra = self._bind(args, kwargs)
        ckey = self._key(constants)
        sizes = self._sizes_from(ckey, tensors, extra)
        return ckey, None if sizes is None else tuple(sorted(sizes.items()))

    def get_tir(self, *args, **kwargs):
        """The specialised PrimFunc (what compile() compiles)."""
        constants, tensors, _, extra = self._bind(args, kwargs)
        return self._parse(constants, tensors, extra)[0]

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()

    def __repr__(self):
        return f"<eager @tilelang.jit function '{self.__name__}'>"

