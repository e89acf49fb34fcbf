"""A stand-in for the few PyTorch calls scripts/gpu_check.py makes, backed by NumPy, for its dry run
(TL_GPU_CHECK_DRY=1, tests/python/test_gpu_check.py). It is NOT PyTorch: "cuda" tensors live in host
memory and kernels run in the emulator. Its only job is to run the GPU gate's own code (argument
building, references, comparisons, the table and the JSON) on a machine without a GPU, so the script
cannot rot between the rare sessions that have one. Tensors report module "torch", so the JIT takes
its PyTorch argument path (data_ptr, stride, dtype names, outputs allocated like the inputs)."""
import math
import os

import ml_dtypes
import numpy as np


class dtype:  # noqa: N801 - torch's spelling
    def __init__(self, name, np_dtype):
        self.name, self.np = name, np.dtype(np_dtype)

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__


float16 = half = dtype("float16", np.float16)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16)
float32 = float = dtype("float32", np.float32)  # noqa: A001
float64 = double = dtype("float64", np.float64)
int32 = dtype("int32", np.int32)
uint16 = dtype("uint16", np.uint16)
bool = dtype("bool", np.bool_)  # noqa: A001
_BY_NP = {d.np: d for d in (float16, bfloat16, float32, float64, int32, uint16, bool)}


class device:  # noqa: N801
    """Every device is host memory here (the emulator reads host arrays): "cuda" reads back as "cpu"."""

    def __init__(self, kind):
        self.type = "cpu"

    def __repr__(self):
        return f"device(type='{self.type}')"


_rng = np.random.default_rng(0)


def manual_seed(seed):
    global _rng
    _rng = np.random.default_rng(seed)


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)


class Tensor:
    __module__ = "torch"

    def __init__(self, a, dev="cpu"):
        self.a = a if isinstance(a, np.ndarray) else np.asarray(a)
        self.device = dev if isinstance(dev, device) else device(dev)

    # what the JIT reads
    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: _BY_NP[self.a.dtype])
    is_cuda = property(lambda self: self.device.type == "cuda")
    T = property(lambda self: Tensor(self.a.T, self.device))

    def data_ptr(self):
        return self.a.ctypes.data

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def dim(self):
        return self.a.ndim

    # conversions
    def _as(self, d):
        return Tensor(self.a.astype(d.np), self.device)

    def double(self):
        return self._as(float64)

    def float(self):  # noqa: A003
        return self._as(float32)

    def half(self):
        return self._as(float16)

    def bfloat16(self):
        return self._as(bfloat16)

    def to(self, dev):
        return Tensor(self.a, dev)

    def cpu(self):
        return Tensor(self.a, "cpu")

    def numpy(self):
        return self.a

    def view(self, d):
        return Tensor(self.a.view(d.np), self.device)

    def item(self):
        return self.a.item()

    # arithmetic
    def _b(self, o):
        return o.a if isinstance(o, Tensor) else o

    def __matmul__(self, o):
        # TL_GPU_CHECK_DRY_WRONG_MATMUL=1 makes every reference product wrong, so a test can show the gate
        # fails (exit 1, MISMATCH rows) when results disagree
        wrong = 1.0 if os.environ.get("TL_GPU_CHECK_DRY_WRONG_MATMUL") == "1" else 0.0
        return Tensor(np.matmul(self.a, self._b(o)) + wrong, self.device)

    def __add__(self, o):
        return Tensor(self.a + self._b(o), self.device)

    def __sub__(self, o):
        return Tensor(self.a - self._b(o), self.device)

    def __mul__(self, o):
        return Tensor(self.a * self._b(o), self.device)

    def __truediv__(self, o):
        return Tensor(self.a / self._b(o), self.device)

    def __rtruediv__(self, o):
        return Tensor(o / self.a, self.device)

    def __invert__(self):
        return Tensor(~self.a, self.device)

    def abs(self):
        return Tensor(np.abs(self.a), self.device)

    def max(self):  # noqa: A003
        return Tensor(self.a.max(), self.device)

    def mean(self, dim, keepdim=False):
        return Tensor(self.a.mean(axis=dim, keepdims=keepdim), self.device)

    def transpose(self, d0, d1):
        return Tensor(np.swapaxes(self.a, d0, d1), self.device)

    def masked_fill(self, mask, value):
        return Tensor(np.where(self._b(mask), value, self.a), self.device)

    def tril(self):
        return Tensor(np.tril(self.a), self.device)


def _new(fill, shape, dev, dt):
    return Tensor(fill(_shape(shape), (dt or float32).np), dev or "cpu")


def randn(*shape, device=None, dtype=None):  # noqa: A002 - torch's keyword names
    return Tensor(_rng.standard_normal(_shape(shape)).astype((dtype or float32).np), device or "cpu")


def empty(*shape, device=None, dtype=None):  # noqa: A002
    return _new(lambda s, d: np.full(s, np.nan, d) if np.dtype(d).kind == "f" else np.zeros(s, d), shape, device,
                dtype)


def zeros(*shape, device=None, dtype=None):  # noqa: A002
    return _new(np.zeros, shape, device, dtype)


def ones(*shape, device=None, dtype=None):  # noqa: A002
    return _new(np.ones, shape, device, dtype)


def empty_like(t):
    return Tensor(np.full_like(t.a, np.nan), t.device)


def from_numpy(a):
    return Tensor(a, "cpu")


def allclose(a, b, atol=1e-8, rtol=1e-5):
    return np.allclose(a.a, b.a, atol=atol, rtol=rtol)


def matmul(a, b):
    return a @ b


def sqrt(t):
    return Tensor(np.sqrt(t.a), t.device)


def softmax(t, dim):
    x = t.a.astype(np.float64)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return Tensor((e / e.sum(axis=dim, keepdims=True)).astype(t.a.dtype), t.device)


class _Functional:
    @staticmethod
    def scaled_dot_product_attention(q, k, v, is_causal=False):
        s = (q @ k.transpose(-1, -2)).a.astype(np.float64) / math.sqrt(q.shape[-1])
        if is_causal:
            n = s.shape[-1]
            s = np.where(np.tril(np.ones((n, n), np.bool_)), s, -np.inf)
        p = softmax(Tensor(s), -1).a
        return Tensor((p @ v.a.astype(np.float64)).astype(q.a.dtype), q.device)


class nn:  # noqa: N801
    functional = _Functional


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        import time

        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3


class cuda:  # noqa: N801
    Event = _Event

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_capability(index=0):
        return (9, 0)  # so the dry run also walks the Hopper (sm_90a) section

    @staticmethod
    def get_device_name(index=0):
        return "dry run: NumPy stand-in for torch, kernels in the emulator"

    @staticmethod
    def is_available():
        return False
