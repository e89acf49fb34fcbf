"""Data types: T.float16 and friends (DType), the canonical name of any dtype spelling (dtype_str), the
NumPy dtype of a name, and TileLang's aliases and the types this compiler does not have. The lowest module of
the T namespace after expr.py: every op family, the parser, the layouts, the jit and the profiler use it."""
import builtins

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from .expr import const
from .utils import _unsupported


def dtype_str(dtype):
    """Canonical dtype name from "float16", T.float16 or a numpy / torch dtype."""
    if isinstance(dtype, DType):
        why = getattr(dtype, "why", None)
        if why:
            from ..errors import TileLangUnsupportedError

            raise TileLangUnsupportedError(f"data type T.{dtype.name} is not supported by TileLang-C++ yet: {why}")
        return dtype.name
    if dtype is float or dtype is int or dtype is builtins.bool:  # `bool` is T.bool in this module
        return {float: "float32", int: "int32", builtins.bool: "bool"}[dtype]
    if isinstance(dtype, type) and dtype.__module__ in ("numpy", "ml_dtypes"):
        import numpy as np

        dtype = np.dtype(dtype)
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    name = str(name).replace("torch.", "")
    aliases = {"half": "float16", "float": "float32", "double": "float64", "e4m3_float8": "float8_e4m3fn",
               "tfloat32": "float32"}  # TileLang's tf32: float32 storage (see DTYPE_ALIASES below)
    name = aliases.get(name, DTYPE_ALIASES.get(name, name))  # TVM's short spellings too: "uint", "int", "bf16"
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
                   "float8_e5m2": ml_dtypes.float8_e5m2, "int4": ml_dtypes.int4,
                   "float4_e2m1fn": ml_dtypes.float4_e2m1fn, "float6_e2m3fn": ml_dtypes.float6_e2m3fn,
                   "float6_e3m2fn": ml_dtypes.float6_e3m2fn, "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu}
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

    # TileLang's dtypes are strings: programs iterate them, test `"int" in dtype`, call dtype.startswith(...).
    def __iter__(self):
        return iter(self.name)

    def __len__(self):
        return len(self.name)

    def __getitem__(self, i):
        return self.name[i]

    def __contains__(self, part):
        return part in self.name

    def __add__(self, other):
        return self.name + other

    def __radd__(self, other):
        return other + self.name

    def __getattr__(self, attr):
        # the str methods (startswith, replace, split, isdigit, ...) act on the name
        if attr.startswith("_") or not hasattr(str, attr):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")
        return getattr(self.__dict__.get("name", ""), attr)


def _ffi_bits(name):
    import re as _re

    if name == "bool":
        return 8
    m = _re.search(r"(\d+)", name)
    return int(m.group(1)) if m else 32


def numpy_dtype(name):
    """The NumPy dtype of a canonical dtype name (ml_dtypes for bfloat16 and the fp8 types)."""
    import ml_dtypes
    import numpy as np

    special = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
               "float8_e5m2": ml_dtypes.float8_e5m2, "float4_e2m1fn": ml_dtypes.float4_e2m1fn,
               "float6_e2m3fn": ml_dtypes.float6_e2m3fn, "float6_e3m2fn": ml_dtypes.float6_e3m2fn,
               "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu}
    return np.dtype(special.get(name, name))


_DTYPES = ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float6_e2m3fn",
           "float6_e3m2fn", "float8_e8m0fnu", "int4",
           "int8", "int16",
           "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


for _d in _DTYPES:
    globals()[_d] = DType(_d)


float8_e4m3 = DType("float8_e4m3fn")
del _d


class _Unsupported_DType(DType):
    """A dtype name TileLang has and this compiler does not: any use says so."""

    _tl_unsupported = True  # scripts/tilelang_census.py counts it as refused, not present

    def __init__(self, name, why):
        self.name = name
        self.why = why

    def __call__(self, *a, **k):
        raise _unsupported(f"T.{self.name}", self.why)


DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
                 "short": "int16", "uint": "uint32", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32",
                 "float8_e4m3": "float8_e4m3fn",
                 # TileLang's tag for fp4 shared tiles in the tcgen05 MMA's padded form: here the storage is the
                 # compiler's choice (the CUDA backend's PadFp4TilesCUDA gives the form to the tiles that need it;
                 # docs/blackwell.md, "fp4 operands")
                 "float4_e2m1_unpacked": "float4_e2m1fn",
                 "float6_e2m3": "float6_e2m3fn", "float6_e3m2": "float6_e3m2fn", "float8_e8m0": "float8_e8m0fnu",
                 # TileLang's tfloat32 is float32 storage whose T.gemm runs on tf32 tensor cores: here every float32
                 # T.gemm on CUDA does (docs/tf32.md), so it is float32 (the CPU target multiplies exactly)
                 "tfloat32": "float32"}


UNSUPPORTED_DTYPES = {
    "float8_e4m3fnuz": "the fnuz fp8 variants are not implemented; use T.float8_e4m3fn",
    "float8_e5m2fnuz": "the fnuz fp8 variants are not implemented; use T.float8_e5m2",
}


dtype = DType  # TileLang's spelling of the dtype class (tilelang.language.dtypes.dtype), as T.dtype


def _torch_dtype_names():
    """{torch dtype: dtype name} for the torch dtypes this compiler has (TileLang's helper modules import it as
    tilelang.language.dtypes._TORCH_DTYPE_TO_STR); built on first use, so torch stays optional."""
    import torch

    out = {}
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                 "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"):
        t = getattr(torch, name, None)
        if t is not None:
            out[t] = name
    return out


def __getattr__(name):
    if name == "_TORCH_DTYPE_TO_STR":
        table = _torch_dtype_names()
        globals()[name] = table
        return table
    raise AttributeError(f"module 'tilelang.language.dtypes' has no attribute '{name}'")
