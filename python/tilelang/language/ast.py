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
        why = getattr(dtype, "why", None)
        if why:
            from ..errors import TileLangUnsupportedError

            raise TileLangUnsupportedError(f"data type T.{dtype.name} is not supported by TileLang-C++ yet: {why}")
        return dtype.name
    if dtype is float or dtype is int or dtype is bool:
        return {float: "float32", int: "int32", bool: "bool"}[dtype]
    if isinstance(dtype, type) and dtype.__module__ in ("numpy", "ml_dtypes"):
        import numpy as np

        dtype = np.dtype(dtype)
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    name = str(name).replace("torch.", "")
    aliases = {"half": "float16", "float": "float32", "double": "float64", "e4m3_float8": "float8_e4m3fn",
               "tfloat32": "float32"}  # TileLang's tf32: float32 storage (see compat.DTYPE_ALIASES)
    name = aliases.get(name, name)
    if not _ffi.valid_dtype(name):
        raise TileLangTypeError(f"unknown data type '{name}'")
    return _ffi.canonical_dtype(name)


class DType:
    """T.float16 and friends: usable as a dtype, an annotation for scalar parameters, and as a
    constructor of typed constants, T.float16(1.5)."""

    def __init__(self, name):
        self.name = name if isinstance(name, str) and _ffi.valid_dtype(name) and name == _ffi.canonical_dtype(name) \
            else dtype_str(name)

    @property
    def bits(self):
        return _ffi_bits(self.name)

    @property
    def itemsize(self):
        return max(1, self.bits // 8)

    def as_numpy(self):
        import ml_dtypes
        import numpy as np

        special = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
                   "float8_e5m2": ml_dtypes.float8_e5m2, "int4": ml_dtypes.int4}
        return np.dtype(special.get(self.name, self.name))

    def as_torch(self):
        import torch

        return getattr(torch, self.name)

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
        from .compat import ptr as _ptr

        # T.Tensor([n], T.ptr): a table of device addresses (int64 elements, as torch's data_ptr() values);
        # T.make_tensor(table[i], shape, dtype) gives the tensor at one of them
        self.dtype = "int64" if dtype is _ptr else dtype_str(dtype)
        self.scope = scope


def _ffi_bits(name):
    import re as _re

    if name == "bool":
        return 8
    m = _re.search(r"(\d+)", name)
    return int(m.group(1)) if m else 32


class TensorFactory:
    """T.Tensor / T.Buffer: T.Tensor((M, N), "float16") or T.Tensor[(M, N), "float16"]."""

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 **kwargs):
        from ..errors import TileLangUnsupportedError

        if data is not None:
            if strides is not None or elem_offset not in (None, 0) or scope != "global" or kwargs:
                raise TileLangUnsupportedError("T.Tensor(..., data=...) views take a shape and a dtype only "
                                               "(no strides=, elem_offset=, scope=)")
            from .compat import make_view

            return make_view(data, shape, dtype, "T.Tensor(..., data=...)")
        if strides is not None or elem_offset not in (None, 0):
            raise TileLangUnsupportedError("T.Tensor(..., strides=/elem_offset=) is not supported: parameters are "
                                           "dense row-major tensors")
        if scope != "global" or kwargs:
            raise TileLangUnsupportedError(f"T.Tensor(...) got unsupported arguments "
                                           f"{sorted(list(kwargs) + (['scope'] if scope != 'global' else []))}")
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
