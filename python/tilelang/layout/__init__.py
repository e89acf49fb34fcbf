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
# They are values a program hands to T.annotate_layout. This compiler records the annotation (the CUDA backend
# warns that it uses its own inferred layouts; see README "TileLang compatibility"), and the objects can be
# evaluated in Python: layout.map_forward_index([i, j]).
def _as_tuple(v):
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v)
    return (int(v),)


class Layout:
    """T.Layout(shape, forward_fn): maps a logical index of `shape` to a physical index."""

    def __init__(self, shape, forward_fn, desc=None):
        self.shape = _as_tuple(shape)
        if not callable(forward_fn):
            raise TypeError("T.Layout(shape, forward_fn) needs a callable forward_fn")
        self.forward_fn = forward_fn
        self.desc = desc or getattr(forward_fn, "__name__", "layout")

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
    def __init__(self, shape, forward_thread_fn, replicate=1, forward_index_fn=None):
        self.shape = _as_tuple(shape)
        if not callable(forward_thread_fn):
            raise TypeError("T.Fragment(shape, forward_thread_fn=...) needs a callable forward_thread_fn")
        self.forward_thread_fn = forward_thread_fn
        self.forward_index_fn = forward_index_fn
        self.replicate = int(replicate)
        self.desc = "user fragment"

    def map_forward_thread(self, indices, rep=0):
        indices = _as_tuple(indices)
        try:
            return int(self.forward_thread_fn(*indices, rep))
        except TypeError:
            return int(self.forward_thread_fn(*indices))

    def thread_local(self, *index):
        local = _as_tuple(self.forward_index_fn(*index)) if self.forward_index_fn else ()
        return (self.map_forward_thread(index),) + local


_CompilerFragment = Fragment


def Fragment(shape_or_kind, params=None, forward_thread_fn=None, replicate=1, forward_index_fn=None,  # noqa: F811
             forward_fn=None):
    """The compiler's fragment tables (Fragment("mma_C", [M, N, wm, wn])) or TileLang's user fragment
    T.Fragment(shape, forward_thread_fn=..., replicate=1, forward_index_fn=None)."""
    if isinstance(shape_or_kind, str):
        return _CompilerFragment(shape_or_kind, params or [])
    fn = forward_thread_fn or forward_fn
    return _UserFragment(shape_or_kind, fn, replicate, forward_index_fn)


def make_swizzled_layout(buffer, k_major=True, allow_pad=True):
    """The XOR swizzle this compiler gives 2-d shared tiles (16-byte chunks permuted by row), as a Layout."""
    shape = tuple(_ffi.const_int(d) for d in buffer.shape)
    if len(shape) != 2 or any(s is None for s in shape):
        raise TypeError("make_swizzled_layout takes a 2-d shared buffer with a constant shape")
    rows, cols = shape
    from ..language.ast import DType

    elem_bytes = DType(buffer.dtype).itemsize

    def swizzle(i, j):
        off = _ffi.swizzled_offset(i, j, cols, elem_bytes)
        return (off // cols, off % cols)

    return Layout(shape, swizzle, desc=f"swizzled {buffer.name}")
