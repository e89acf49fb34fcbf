"""The parser's expressions (a base class of parser.Parser): names, operators, calls, subscripts and
slices of buffers (loads and regions), comprehensions and lambdas, evaluated while parsing; IR values
become IR."""
import ast
import builtins
import functools
import inspect
import itertools
import operator

from .. import _ffi
from ..errors import TileLangError, TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from .ast import KernelSpec, LoopSpec, RegionSpec, simplify
from .expr import Expr, const
from .macro_refs import check_ref_argument, ref_call_arguments

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne}


class ExprParsing:
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
        refs, ref_kw = ref_call_arguments(fn, node) if getattr(fn, "is_macro", False) else ({}, set())
        args = []
        for i, a in enumerate(node.args):
            if i in refs:
                args.append(self.eval_ref(a, fn, refs[i]))
                continue
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
                kwargs[k.arg] = self.eval_ref(k.value, fn, k.arg) if k.arg in ref_kw else self.eval(k.value)
        if isinstance(fn, KernelSpec) or isinstance(fn, _ffi.Buffer):
            raise self.error(node, f"'{type(fn).__name__}' object is not callable")
        self.ctx.span = self.span(node)
        if (fn is builtins.max or fn is builtins.min) and not kwargs and len(args) >= 2 and \
                any(isinstance(a, Expr) for a in args):
            # Python's max / min of kernel expressions (`max(0, seq_len - 3)`, a T.dynamic size): T.max / T.min,
            # as comparing them has no value while the program is parsed
            from . import math_intrinsics

            pick = math_intrinsics.max if fn is builtins.max else math_intrinsics.min
            return self.apply(node, functools.reduce, pick, args)
        return self.apply(node, fn, *args, **kwargs)

    def eval_ref(self, node, macro, name):
        """The argument of a T.Ref macro parameter: the T.alloc_var buffer itself (not its value)."""
        value = self.lookup(node, node.id) if isinstance(node, ast.Name) else self.eval(node)
        self.located(node, check_ref_argument, macro, name, value)
        return value

    def let_aware_extent(self, lo, hi, ext):
        """A slice's extent through the kernel lets its bounds name: with `H0 = ...; H1 = H0 + 64`,
        `X[H0:H1]` is 64 wide (H1 - H0 alone does not simplify). Bounds that are let variables are
        replaced by their values, a few levels deep; the first constant wins, else the plain difference."""
        lets = getattr(self, "let_values", [])
        if not lets:
            return ext

        def value_of(e):
            if isinstance(e, _ffi.Var):
                for var, val in reversed(lets):
                    if isinstance(var, _ffi.Var) and _ffi.structural_equal_expr(var, e):
                        return val
            return None

        def chain(e):  # e, its value, its value's value, ... (bounds that are let variables)
            out = [e]
            while len(out) < 4 and value_of(out[-1]) is not None:
                out.append(value_of(out[-1]))
            return out

        for b in chain(hi):
            for a in chain(lo):
                cand = simplify(b - a)
                if _ffi.const_int(cand) is not None:
                    return cand
        return ext

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
                if _ffi.const_int(ext) is None:
                    ext = self.let_aware_extent(lo, hi, ext)
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
