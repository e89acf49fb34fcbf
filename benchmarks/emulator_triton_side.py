"""The Triton side of bench_emulator.py, run by the Python that has Triton (the benchmark's own environment;
Triton is not a dependency of the package). Runs a plain tiled fp16 GEMM (fp32 accumulator, fp16 out) under
Triton's interpreter (TRITON_INTERPRET=1) with the same tiles as our reference GEMM, on NumPy arrays handed to
the interpreter through a minimal tensor stand-in (the interpreter asks for data_ptr / storage / dtype only).
Serves timed runs one at a time (see main) against a float64 NumPy product of the same seeded inputs."""
import json
import os
import sys
import time

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


class _DtypeName:
    def __init__(self, name):
        self.name = name

    def __str__(self):  # what the interpreter's type mangling parses: "torch.<dtype>"
        return "torch." + self.name


class HostTensor:
    """A NumPy array as Triton's interpreter sees a tensor already on the host: its storage is itself."""

    def __init__(self, array):
        self.array = array
        self.dtype = _DtypeName(str(array.dtype))

    def data_ptr(self):
        return self.array.ctypes.data

    def untyped_storage(self):
        return self

    def cpu(self):
        return self

    def new_empty(self, *shape, **kw):
        return HostTensor(self.array)

    def set_(self, storage, offset, size, stride):
        self.array = storage.array
        return self

    def storage_offset(self):
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def copy_(self, other):
        if other.array is not self.array:
            self.array[...] = other.array


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
         BK: tl.constexpr):
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def main():
    # One request a line, {"n": .., "bm": .., "bn": .., "bk": ..}: one timed run of the n^3 GEMM (inputs drawn once
    # per n), answered with one JSON line {"s": seconds, "max_abs_err": ..}, so that the caller can interleave
    # these runs with its own on a noisy machine.
    inputs = {}
    for line in sys.stdin:
        req = json.loads(line)
        n = req["n"]
        if n not in inputs:
            rng = np.random.default_rng(n)
            a = rng.standard_normal((n, n)).astype(np.float16)
            b = rng.standard_normal((n, n)).astype(np.float16)
            inputs[n] = (a, b, a.astype(np.float64) @ b.astype(np.float64))
        a, b, ref = inputs[n]
        c = np.zeros((n, n), np.float16)
        bm, bn, bk = req["bm"], req["bn"], req["bk"]
        t = time.perf_counter()
        gemm[(n // bn, n // bm)](HostTensor(a), HostTensor(b), HostTensor(c), n, n, n, bm, bn, bk)
        s = time.perf_counter() - t
        print(json.dumps({"s": s, "max_abs_err": float(np.abs(c - ref).max())}), flush=True)


if __name__ == "__main__":
    main()
