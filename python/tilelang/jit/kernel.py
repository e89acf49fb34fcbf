"""Compiled kernels as Python callables: argument marshalling (NumPy, PyTorch, any DLPack
tensor), output allocation for out_idx, and access to the generated source."""
import os

import numpy as np

from .. import _ffi
from ..errors import TileLangArgumentError, TileLangUnsupportedError
from . import target as _target

_INCLUDE_DIR = None


def include_dir():
    """Where the device headers (tl_device/...) are: installed with the package or in the source tree."""
    global _INCLUDE_DIR
    if _INCLUDE_DIR is None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        candidates = [os.path.join(here, "include"),
                      os.path.join(os.path.dirname(os.path.dirname(here)), "include")]
        for c in candidates:
            if os.path.exists(os.path.join(c, "tl_device", "cpu", "runtime.h")):
                _INCLUDE_DIR = c
                break
        else:
            raise TileLangUnsupportedError("cannot find the tl_device headers; reinstall the package")
    return _INCLUDE_DIR


def _dtype_name(dt):
    name = str(dt).replace("torch.", "")
    return {"half": "float16", "float": "float32", "double": "float64", "bool_": "bool"}.get(name, name)


def _to_arg(x, index):
    """Describes a tensor (or scalar) for the C++ checker without copying it."""
    if isinstance(x, np.ndarray):
        itemsize = x.dtype.itemsize
        strides = [s // itemsize if itemsize else 0 for s in x.strides]
        return _ffi.make_tensor_arg(x.ctypes.data if x.size else 0, _dtype_name(x.dtype), list(x.shape), strides,
                                    "cpu"), x
    mod = type(x).__module__
    if mod.startswith("torch"):
        dev = x.device.type
        return _ffi.make_tensor_arg(x.data_ptr(), _dtype_name(x.dtype), list(x.shape), list(x.stride()),
                                    "cpu" if dev == "cpu" else f"{dev}"), x
    if isinstance(x, (bool, int, float, np.generic)):
        return _ffi.make_scalar_arg(float(x)), x
    if hasattr(x, "__dlpack__"):
        try:
            arr = np.from_dlpack(x)
        except Exception as e:  # e.g. a GPU tensor
            raise TileLangArgumentError(f"argument {index}: cannot read this DLPack tensor on the CPU ({e})") from None
        return _to_arg(arr, index)
    raise TileLangArgumentError(f"argument {index}: expected a NumPy array, a PyTorch tensor or a DLPack tensor, "
                                f"got {type(x).__name__}")


def _np_dtype(name):
    import ml_dtypes

    special = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
               "float8_e5m2": ml_dtypes.float8_e5m2}
    return np.dtype(special.get(name, name))


class JITKernel:
    """A compiled kernel: call it with tensors; with out_idx, the outputs are allocated and returned."""

    def __init__(self, func, out_idx=None, target="cpu", execution_backend=None, pass_configs=None, verbose=False):
        self.func = func
        self.kind, self.target_opts = _target.normalize(target)
        self.target = target
        self.pass_configs = dict(pass_configs or {})
        n = len(func.params)
        if out_idx is None:
            out_idx = []
        elif isinstance(out_idx, int):
            out_idx = [out_idx]
        self.out_idx = sorted(i % n if -n <= i < n else _bad_out(i, n) for i in out_idx)
        if execution_backend not in (None, "auto", "cpp", "native"):
            raise TileLangUnsupportedError(f"execution_backend '{execution_backend}' is not available for target "
                                           f"'{self.kind}' in this build")
        if self.kind != "cpu":
            raise TileLangUnsupportedError(
                f"target '{self.kind}': code generation for this target is not implemented yet in TileLang-C++; "
                "use target='cpu' (the CUDA backend and the emulator are open work)")
        use_cache = not os.environ.get("TILELANG_DISABLE_CACHE", "") not in ("", "0")
        self._mod = _ffi.build_cpu(func, include_dir(), use_cache, os.environ.get("TILELANG_CACHE_DIR", ""),
                                   self.pass_configs.get("cpu.compile_flags", ""))
        if verbose:
            print(self.get_kernel_source())

    @property
    def from_cache(self):
        return self._mod.from_cache

    def get_kernel_source(self):
        return self._mod.source

    def __call__(self, *args):
        n = len(self.func.params)
        if self.out_idx:
            if len(args) != n - len(self.out_idx):
                raise TileLangArgumentError(f"kernel '{self.func.name}' takes {n - len(self.out_idx)} inputs "
                                            f"(outputs {self.out_idx} are allocated for you), got {len(args)}")
            descs = [_to_arg(a, i)[0] for i, a in enumerate(args)]
            shapes = self._mod.output_shapes(descs, self.out_idx)
            like_torch = next((a for a in args if type(a).__module__.startswith("torch")), None)
            outs = []
            for idx, shape in zip(self.out_idx, shapes):
                dtype = self.func.params[idx][1].dtype
                if like_torch is not None:
                    import torch

                    outs.append(torch.empty(shape, dtype=getattr(torch, dtype)))
                else:
                    outs.append(np.empty(shape, dtype=_np_dtype(dtype)))
            full, it_in, it_out = [], iter(args), iter(outs)
            for i in range(n):
                full.append(next(it_out) if i in self.out_idx else next(it_in))
        else:
            full = list(args)
            outs = []
        keep = [_to_arg(a, i) for i, a in enumerate(full)]
        self._mod.launch([k[0] for k in keep])
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else outs

    def get_profiler(self, tensor_supply_type=None):
        from ..profiler import Profiler

        return Profiler(self)


def _bad_out(i, n):
    raise TileLangArgumentError(f"out_idx {i} is out of range for a kernel with {n} parameters")
