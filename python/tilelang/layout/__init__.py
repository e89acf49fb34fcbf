"""The compiler's fragment layouts, for inspection and plots (tilelang.tools.plot_layout).

A Fragment says which thread holds each element of a register tile and at which local index.
"""
from .. import _ffi


class Fragment:
    def __init__(self, kind, params):
        self.kind, self.params = kind, list(params)
        shape, table, desc = _ffi.fragment_table(kind, list(params))
        self.shape = tuple(shape)
        self.desc = desc
        self._table = table

    def thread_local(self, *index):
        flat = 0
        for d, i in enumerate(index):
            flat = flat * self.shape[d] + i
        return tuple(self._table[flat])

    def value(self, origin=""):
        """This layout as an IR value, as LayoutInference records it: `with T.attr(buf, "tl.layout",
        layout.value()):` (pass tests write their inputs with it)."""
        return _ffi.fragment_value(self.kind, self.params, origin)

    def __repr__(self):
        return f"Fragment({self.desc})"


def mma_accumulator(M=16, N=8, warps_m=1, warps_n=1):
    """The mma.sync m16n8k16 accumulator layout of an M x N tile over a warps_m x warps_n warp grid."""
    return Fragment("mma_C", [M, N, warps_m, warps_n])


def striped(shape, threads, vec):
    """Elements dealt to threads in row-major chunks of `vec` (the free layout)."""
    return Fragment("striped", [*shape, threads, vec])


def replicated(shape, threads):
    """Every thread holds the whole tile."""
    return Fragment("replicated", [*shape, threads])


def mma_rows(M=16, warps_m=1, warps_n=1):
    """The row vector an mma accumulator reduces to (replica 0 shown)."""
    return Fragment("mma_rows", [M, warps_m, warps_n])


# ---- TileLang's user-facing layout objects (T.Layout, T.Fragment, make_swizzled_layout) ---------------------
# They are values a program hands to T.annotate_layout, which traces their Python functions into IR expressions
# (see `trace` below) for the GPU lowerings (src/layout/user_layout.h); they can also be evaluated in Python:
# layout.map_forward_index([i, j]).
def _dim(x):
    """A layout's extent: an int, or a constant IR expression (a buffer's own shape, `buf.shape`)."""
    if isinstance(x, int):
        return x
    v = _ffi.const_int(x) if isinstance(x, _ffi.Expr) else None
    if v is None:
        try:
            return int(x)
        except TypeError:
            raise TypeError(f"a layout's shape must be compile-time integers, got {x!r}") from None
    return v


def _as_tuple(v):
    if isinstance(v, (list, tuple)) or (not isinstance(v, (int, _ffi.Expr)) and hasattr(v, "__iter__")):
        return tuple(_dim(x) for x in v)
    return (_dim(v),)


class Layout:
    """T.Layout(shape, forward_fn): maps a logical index of `shape` to a physical index (a tuple of any rank)."""

    def __init__(self, shape, forward_fn, desc=None, compiler_swizzle=False):
        self.shape = _as_tuple(shape)
        if not callable(forward_fn):
            raise TypeError("T.Layout(shape, forward_fn) needs a callable forward_fn")
        self.forward_fn = forward_fn
        self.desc = desc or getattr(forward_fn, "__name__", "layout")
        self.compiler_swizzle = compiler_swizzle  # make_swizzled_layout: whatever swizzle the target uses

    def get_input_shape(self):
        return list(self.shape)

    def map_forward_index(self, indices):
        indices = _as_tuple(indices)
        if len(indices) != len(self.shape):
            raise TypeError(f"layout over {len(self.shape)}-d tiles got {len(indices)} indices")
        for i, n in zip(indices, self.shape):
            if not 0 <= i < n:
                raise IndexError(f"index {indices} is outside the layout's shape {self.shape}")
        return _as_tuple(self.forward_fn(*indices))

    def __repr__(self):
        return f"Layout({self.desc}, shape={self.shape})"


class _UserFragment:
    """TileLang's T.Fragment(shape, forward_thread_fn=..., replicate=1, forward_index_fn=None), or
    T.Fragment(shape, forward_fn=...) with forward_fn(i, ...[, rep]) -> (thread, index)."""

    def __init__(self, shape, forward_thread_fn=None, replicate=1, forward_index_fn=None, forward_fn=None):
        self.shape = _as_tuple(shape)
        if forward_fn is None and not callable(forward_thread_fn):
            raise TypeError("T.Fragment(shape, forward_thread_fn=...) needs a callable forward_thread_fn")
        if forward_fn is not None and not callable(forward_fn):
            raise TypeError("T.Fragment(shape, forward_fn=...) needs a callable forward_fn")
        self.forward_thread_fn = forward_thread_fn
        self.forward_index_fn = forward_index_fn
        self.forward_fn = forward_fn
        self.replicate = int(replicate)
        if self.replicate < 1:
            raise TypeError(f"T.Fragment(replicate=...) must be positive, got {replicate}")
        self.desc = "user fragment"

    def _call(self, index, rep):
        args = list(index) + ([rep] if self.replicate > 1 else [])
        if self.forward_fn is not None:
            thread, local = self.forward_fn(*args)
            return thread, local
        thread = self.forward_thread_fn(*args)
        local = self.forward_index_fn(*index) if self.forward_index_fn is not None else None
        return thread, local

    def map_forward_thread(self, indices, rep=0):
        return _scalar(self._call(_as_tuple(indices), rep)[0])

    def thread_local(self, *index):
        thread, local = self._call(index, 0)
        return (_scalar(thread),) + (_as_tuple(local) if local is not None else ())


def _scalar(v):
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise TypeError(f"expected one value, got {v!r}")
        v = v[0]
    return int(v)


_CompilerFragment = Fragment


def Fragment(shape_or_kind, params=None, forward_thread_fn=None, replicate=1, forward_index_fn=None,  # noqa: F811
             forward_fn=None):
    """The compiler's fragment tables (Fragment("mma_C", [M, N, wm, wn])) or TileLang's user fragment
    T.Fragment(shape, forward_thread_fn=..., replicate=1, forward_index_fn=None) / T.Fragment(shape, forward_fn=...)."""
    if isinstance(shape_or_kind, str):
        return _CompilerFragment(shape_or_kind, params or [])
    return _UserFragment(shape_or_kind, forward_thread_fn, replicate, forward_index_fn, forward_fn)


def make_swizzled_layout(buffer, k_major=True, allow_pad=True):
    """The XOR swizzle this compiler gives 2-d shared tiles (16-byte chunks permuted by row), as a Layout. Given to
    T.annotate_layout it means "the compiler's swizzle", which every target keeps (on sm_90 the swizzle wgmma and
    TMA read; in Python it evaluates the sm_80 one)."""
    shape = tuple(_ffi.const_int(d) for d in buffer.shape)
    if len(shape) != 2 or any(s is None for s in shape):
        raise TypeError("make_swizzled_layout takes a 2-d shared buffer with a constant shape")
    rows, cols = shape
    from ..language.dtypes import DType

    elem_bytes = DType(buffer.dtype).itemsize

    def swizzle(i, j):
        off = _ffi.swizzled_offset(i, j, cols, elem_bytes)
        return (off // cols, off % cols)

    return Layout(shape, swizzle, desc=f"swizzled {buffer.name}", compiler_swizzle=True)


# ---- tracing a layout's Python functions into IR ---------------------------------------------------------------
class LayoutTraceError(Exception):
    """A layout function used something that has no IR form (a branch on the index, an unsupported operator)."""


class _Sym:
    """An index while a layout function is traced: Python's integer operators build IR expressions (floor
    division and modulo, as on Python ints; `^` is a bitwise xor; `&`, `>>`, `<<` by powers of two)."""

    __slots__ = ("e",)

    def __init__(self, e):
        self.e = e

    @staticmethod
    def _ir(x):
        if isinstance(x, _Sym):
            return x.e
        if isinstance(x, bool) or not isinstance(x, int):
            if isinstance(x, _ffi.Expr):
                return x
            raise LayoutTraceError(f"a layout function mixed an index with a {type(x).__name__} ({x!r})")
        return _ffi.int_imm("int32", x)

    def _bin(self, op, o, rev=False):
        a, b = (self._ir(o), self.e) if rev else (self.e, self._ir(o))
        return _Sym(_ffi.binary(op, a, b))

    __add__ = lambda s, o: s._bin("add", o)
    __radd__ = lambda s, o: s._bin("add", o, True)
    __sub__ = lambda s, o: s._bin("sub", o)
    __rsub__ = lambda s, o: s._bin("sub", o, True)
    __mul__ = lambda s, o: s._bin("mul", o)
    __rmul__ = lambda s, o: s._bin("mul", o, True)
    __floordiv__ = lambda s, o: s._bin("floordiv", o)
    __rfloordiv__ = lambda s, o: s._bin("floordiv", o, True)
    __mod__ = lambda s, o: s._bin("floormod", o)
    __rmod__ = lambda s, o: s._bin("floormod", o, True)
    __neg__ = lambda s: _Sym(_ffi.binary("sub", _ffi.int_imm("int32", 0), s.e))
    __pos__ = lambda s: s

    def __xor__(self, o):
        return _Sym(_ffi.call("int32", "tl.bitwise_xor", [self.e, self._ir(o)]))

    __rxor__ = __xor__

    @staticmethod
    def _pow2(o, what):
        if isinstance(o, bool) or not isinstance(o, int) or o < 0:
            raise LayoutTraceError(f"`{what}` in a layout function needs a constant non-negative int, got {o!r}")
        return o

    def __and__(self, o):
        m = self._pow2(o, "&")
        if m & (m + 1):
            raise LayoutTraceError(f"`& {m}` in a layout function: only masks of the form 2^k - 1 are supported "
                                   "(they are % 2^k)")
        return _Sym(_ffi.binary("floormod", self.e, _ffi.int_imm("int32", m + 1)))

    __rand__ = __and__

    def __rshift__(self, o):
        return _Sym(_ffi.binary("floordiv", self.e, _ffi.int_imm("int32", 1 << self._pow2(o, ">>"))))

    def __lshift__(self, o):
        return _Sym(_ffi.binary("mul", self.e, _ffi.int_imm("int32", 1 << self._pow2(o, "<<"))))

    def __bool__(self):
        raise LayoutTraceError("a layout function branches on the index (if / and / or / comparisons); write it "
                               "with arithmetic (//, %, ^) instead")

    def __index__(self):
        raise LayoutTraceError("a layout function used the index as a Python int (indexing a list, range(...))")

    __int__ = __index__

    def __lt__(self, o):
        return self.__bool__()

    __le__ = __gt__ = __ge__ = __lt__


def _traced(v, what):
    if isinstance(v, _Sym):
        return v.e
    if isinstance(v, bool):
        raise LayoutTraceError(f"the {what} is a bool")
    if isinstance(v, int):
        return _ffi.int_imm("int32", v)
    if isinstance(v, _ffi.Expr):
        return v
    raise LayoutTraceError(f"the {what} is a {type(v).__name__} ({v!r}), not an integer expression")


def _traced_list(v, what):
    if isinstance(v, (list, tuple)):
        return [_traced(x, what) for x in v]
    return [_traced(v, what)]


def trace(layout, buffer, span):
    """The IR value of a T.Layout / user T.Fragment for `buffer` (the attr "tl.user_layout"), checked by
    enumerating the tile (src/layout/user_layout.cc). Raises LayoutTraceError for functions without an IR form;
    layout errors (two elements in one slot, ...) are TileLang errors from the checker."""
    shape = [_ffi.const_int(d) for d in buffer.shape]
    if isinstance(layout, Layout):
        vars_ = [_ffi.var(f"i{d}", "int32") for d in range(len(shape))]
        phys = _traced_list(layout.forward_fn(*[_Sym(v) for v in vars_]), "layout's physical index")
        return _ffi.shared_layout_value(buffer.name, shape, vars_, phys, span)
    if isinstance(layout, _UserFragment):
        vars_ = [_ffi.var(f"i{d}", "int32") for d in range(len(shape))]
        rep = _ffi.var("rep", "int32") if layout.replicate > 1 else None
        thread, local = layout._call([_Sym(v) for v in vars_], _Sym(rep) if rep is not None else None)
        thread_e = _traced_list(thread, "fragment's thread")
        if len(thread_e) != 1:
            raise LayoutTraceError(f"the fragment's thread is {len(thread_e)} values, not one")
        local_e = None
        if local is not None:
            locs = _traced_list(local, "fragment's register index")
            if len(locs) != 1:
                raise LayoutTraceError(f"the fragment's register index is {len(locs)} values, not one")
            local_e = locs[0]
        return _ffi.user_fragment_value(buffer.name, shape, vars_, rep, layout.replicate, thread_e[0], local_e,
                                        span)
    raise TypeError(f"not a user layout: {layout!r}")
