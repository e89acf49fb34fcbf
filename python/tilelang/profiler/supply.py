"""Inputs for profiling and checking a kernel: NumPy arrays of each parameter's dtype and shape, filled
according to a TensorSupplyType. Symbolic dimensions take values from ``dynamic_values`` (by symbol name)
or whole shapes from ``shapes`` (by parameter name or index), else DEFAULT_DYNAMIC_SIZE."""
import enum

import numpy as np

from .. import _ffi
from ..errors import TileLangArgumentError, TileLangTypeError
from ..language.dtypes import numpy_dtype as _np_dtype

DEFAULT_DYNAMIC_SIZE = 128


class TensorSupplyType(enum.Enum):
    """How input tensors are filled (TileLang's names)."""

    Integer = 1  # small integers (exact in every dtype: sums of products stay exact in fp16/fp32)
    Uniform = 2  # uniform in [-1, 1) (integers: [-2, 2])
    Normal = 3  # standard normal (integers: small integers)
    Randn = 4  # same as Normal
    Zero = 5
    One = 6
    Auto = 7  # Integer for integer and bool dtypes, Normal for floating point


def _is_integer(dtype):
    return dtype == "bool" or dtype.startswith(("int", "uint"))


def _eval_dim(expr, values, param, axis):
    v = _ffi.const_int(expr)
    if v is not None:
        return int(v)
    name = getattr(expr, "name", None)
    if name is not None:
        return int(values.get(name, DEFAULT_DYNAMIC_SIZE))
    # An expression of symbols (e.g. n * 2): evaluate its printed form with the symbols' values.
    text = _ffi.print_expr(expr)
    env = {"T": _DimOps, **{k: int(x) for k, x in values.items()}}
    try:
        return int(eval(text, {"__builtins__": {}}, env))  # noqa: S307 -- text is our own printer's output
    except Exception:
        raise TileLangArgumentError(
            f"cannot size dimension {axis} ('{text}') of parameter '{param}'; pass shapes={{'{param}': (...)}} or "
            "dynamic_values={name: value} for its symbols") from None


class _DimOps:
    ceildiv = staticmethod(lambda a, b: -(-a // b))
    floordiv = staticmethod(lambda a, b: a // b)
    floormod = staticmethod(lambda a, b: a % b)
    max = staticmethod(max)
    min = staticmethod(min)


class ParamSpec:
    """A kernel parameter: index, name, dtype and concrete shape (None for a scalar)."""

    __slots__ = ("index", "name", "dtype", "shape")

    def __init__(self, index, name, dtype, shape):
        self.index, self.name, self.dtype, self.shape = index, name, dtype, shape

    def __repr__(self):
        return f"ParamSpec({self.index}, {self.name!r}, {self.dtype}, {self.shape})"


def param_specs(func, shapes=None, dynamic_values=None):
    """The concrete dtype and shape of every parameter of a PrimFunc."""
    shapes = dict(shapes or {})
    values = dict(dynamic_values or {})
    specs = []
    for i, (var, buf) in enumerate(func.params):
        name = buf.name if buf is not None else var.name
        if buf is None:
            specs.append(ParamSpec(i, name, var.dtype, None))
            continue
        given = shapes.get(name, shapes.get(i))
        if given is not None:
            given = tuple(int(s) for s in given)
            if len(given) != len(buf.shape):
                raise TileLangArgumentError(f"shapes['{name}'] has {len(given)} dimensions but parameter '{name}' "
                                            f"has {len(buf.shape)}")
            for e, s in zip(buf.shape, given):  # bind the symbols this shape determines
                if getattr(e, "name", None) is not None and _ffi.const_int(e) is None:
                    values.setdefault(e.name, s)
    for i, (var, buf) in enumerate(func.params):
        if buf is None:
            continue
        name = buf.name
        given = shapes.get(name, shapes.get(i))
        shape = tuple(int(s) for s in given) if given is not None else \
            tuple(_eval_dim(e, values, name, a) for a, e in enumerate(buf.shape))
        specs.append(ParamSpec(i, name, buf.dtype, shape))
    specs.sort(key=lambda s: s.index)
    return specs


def make_tensor(dtype, shape, supply=TensorSupplyType.Auto, rng=None):
    """A NumPy array (or Python scalar when shape is None) of `dtype` filled as `supply` says."""
    if isinstance(supply, str):
        try:
            supply = TensorSupplyType[supply]
        except KeyError:
            raise TileLangTypeError(f"unknown tensor supply type '{supply}'; one of "
                                    f"{', '.join(t.name for t in TensorSupplyType)}") from None
    if not isinstance(supply, TensorSupplyType):
        raise TileLangTypeError(f"tensor_supply_type must be a tilelang.TensorSupplyType, got {supply!r}")
    rng = rng if rng is not None else np.random.default_rng()
    integer = _is_integer(dtype)
    unsigned = dtype == "bool" or dtype.startswith("uint")
    size = () if shape is None else shape
    if supply == TensorSupplyType.Zero:
        data = np.zeros(size)
    elif supply == TensorSupplyType.One:
        data = np.ones(size)
    elif dtype == "bool":
        data = rng.integers(0, 2, size)
    elif supply == TensorSupplyType.Integer or integer:  # integer dtypes: small integers whatever the type
        data = rng.integers(0 if unsigned else -2, 5 if unsigned else 3, size)
    elif supply == TensorSupplyType.Uniform:
        data = rng.uniform(-1.0, 1.0, size)
    else:  # Normal, Randn, Auto on floating point
        data = rng.standard_normal(size)
    if shape is None:
        return int(data) if integer else float(data)
    return np.ascontiguousarray(np.asarray(data).astype(_np_dtype(dtype)))
