"""Random arguments for a PrimFunc's parameters (NumPy arrays of the declared shapes and dtypes,
symbolic dims set to a small size), for the fuzzers."""
import numpy as np

from tilelang import _ffi


def _np_dtype(name):
    import ml_dtypes

    special = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
               "float8_e5m2": ml_dtypes.float8_e5m2, "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4}
    return np.dtype(special.get(name, name))


def random_args(func, rng, dynamic=100):
    args = []
    for var, buf in func.params:
        if buf is None:
            args.append(1 if "int" in var.dtype or var.dtype == "bool" else 0.5)
            continue
        shape = []
        for d in buf.shape:
            c = _ffi.const_int(d)
            shape.append(c if c is not None else dynamic)
        dt = _np_dtype(buf.dtype)
        if np.issubdtype(np.dtype(dt).type, np.integer) or buf.dtype in ("int4", "uint4", "bool"):
            a = rng.integers(0, 3, shape).astype(dt)
        else:
            a = rng.standard_normal(shape).astype(dt)
        args.append(a)
    return args
