"""Front-end objects that exist only while parsing: parameter annotations, loop and kernel
specs, and regions (slices of buffers)."""
import sys

from .. import _ffi
from ..errors import TileLangError, TileLangSyntaxError, TileLangTypeError
from . import builder
from .expr import const


def dtype_str(dtype):
    """Canonical dtype name from "float16", T.float16 or a numpy / torch dtype."""
    if isinstance(dtype, DType):
        return dtype.name
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    name = str(name).replace("torch.", "")
    aliases = {"half": "float16", "float": "float32", "double": "float64", "e4m3_float8": "float8_e4m3fn"}
    name = aliases.get(name, name)
    if not _ffi.valid_dtype(name):
        raise TileLangTypeError(f"unknown data type '{name}'")
    return _ffi.canonical_dtype(name)


class DType:
    """T.float16 and friends: usable as a dtype, an annotation for scalar parameters, and as a
    constructor of typed constants, T.float16(1.5)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, value=None):
        if value is None:
            raise TileLangSyntaxError(f"T.{self.name}() needs a value")
        if isinstance(value, _ffi.Expr):
            return _ffi.cast(self.name, value)
        return const(value, self.name)

    def __repr__(self):
        return f"T.{self.name}"

    def __eq__(self, other):
        try:
            return dtype_str(other) == self.name
        except Exception:
            return False

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name


class TensorSpec:
    """The annotation T.Buffer(shape, dtype) / T.Tensor(shape, dtype) of a kernel parameter."""

    def __init__(self, shape, dtype="float32", scope="global"):
        if isinstance(shape, (int, _ffi.Expr)):
            shape = (shape,)
        try:
            self.shape = tuple(shape)
        except TypeError:
            raise TileLangTypeError(f"a tensor shape must be a tuple of sizes, not {type(shape).__name__}") from None
        for d in self.shape:
            if not isinstance(d, (int, _ffi.Expr)) or (isinstance(d, int) and d < 0):
                raise TileLangTypeError(f"tensor dimension {d!r} must be a non-negative int or a T.dynamic symbol")
        self.dtype = dtype_str(dtype)
        self.scope = scope


class TensorFactory:
    """T.Tensor / T.Buffer: T.Tensor((M, N), "float16") or T.Tensor[(M, N), "float16"]."""

    def __call__(self, shape, dtype="float32", **kwargs):
        return self._spec(shape, dtype)

    def __getitem__(self, item):
        return self._spec(*item)

    @staticmethod
    def _spec(shape, dtype="float32"):
        try:
            return TensorSpec(shape, dtype)
        except TileLangError as e:
            if e.span is not None or builder.current() is not None:
                raise  # inside the parser, which adds the location
            # Python evaluates parameter annotations before @T.prim_func sees the function:
            # point at the annotation in the user's source.
            raise builder.error_at(builder.caller_span(sys._getframe(2)), str(e), type(e)) from None


class LoopSpec:
    """What T.Parallel / T.Pipelined / T.serial / ... return: the parser turns it into loops."""

    def __init__(self, kind, ranges, annotations=None):
        self.kind = kind
        self.ranges = ranges  # list of (min, extent) Exprs
        self.annotations = annotations or {}


class AttrSpec:
    """What T.attr returns: the parser turns `with T.attr(node, key, value):` into an AttrStmt."""

    def __init__(self, node, key, value):
        self.node, self.key, self.value = node, key, value


class KernelSpec:
    def __init__(self, grid, threads):
        self.grid = grid
        self.threads = threads

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
