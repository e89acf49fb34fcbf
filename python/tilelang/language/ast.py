"""Front-end objects that exist only while parsing: loop and kernel specs, attributes, and regions
(slices of buffers). Parameter annotations are in proxy.py, data types in dtypes.py."""
from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from .expr import const


class LoopSpec:
    """What T.Parallel / T.Pipelined / T.serial / ... return: the parser turns it into loops."""

    def __init__(self, kind, ranges, annotations=None, steps=None):
        self.kind = kind
        self.ranges = ranges  # list of (min, extent) Exprs
        self.annotations = annotations or {}
        # per loop: None, or (start, step) when the loop runs 0..extent and the user's variable is
        # start + i * step (T.serial / range with a step)
        self.steps = steps


class AttrSpec:
    """What T.attr returns: the parser turns `with T.attr(node, key, value):` into an AttrStmt."""

    def __init__(self, node, key, value):
        self.node, self.key, self.value = node, key, value


class KernelSpec:
    def __init__(self, grid, threads, cluster=None):
        self.grid = grid
        self.threads = threads
        self.cluster = cluster  # T.ClusterKernel: (x, y, z) blocks per cluster, else None

    def __enter__(self):  # pragma: no cover - only reached when used outside a prim_func
        raise TileLangSyntaxError("T.Kernel can only be used in a `with` statement inside a @T.prim_func body")

    def __exit__(self, *a):  # pragma: no cover
        return False


class RegionSpec:
    """A sliced buffer A[a:b, c] — a tile that T.copy / T.gemm / ... act on."""

    def __init__(self, buffer, mins, extents, sliced):
        self.buffer = buffer
        self.mins = mins
        self.extents = extents
        self.sliced = sliced  # per dim: True for a slice, False for a scalar index

    def region(self):
        return _ffi.Region(self.buffer, list(zip(self.mins, self.extents)))


def simplify(e):
    return _ffi.simplify_expr(const(e))


def region_of(x, what):
    """A tile operand as (buffer, mins, extents, is_point)."""
    if isinstance(x, _ffi.Buffer):
        return x, [const(0) for _ in x.shape], list(x.shape), False
    if isinstance(x, RegionSpec):
        return x.buffer, x.mins, x.extents, False
    if isinstance(x, _ffi.BufferLoad):
        return x.buffer, list(x.indices), [const(1) for _ in x.indices], True
    raise TileLangTypeError(f"{what} must be a buffer, a slice of one or a buffer element, not {type(x).__name__}")
