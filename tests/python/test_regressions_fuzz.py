"""Regression tests for the defects found by fuzzing (issue 20) and for the determinism and scalar-ABI
items of issue 10. Each test is named after the defect it pins down.

Numeric checks compare with NumPy in float64 on seeded inputs (the seed is printed).
"""
import json
import os
import subprocess
import sys
import sys as _sys

import numpy as np
import pytest

import kernels as K
import tilelang
import tilelang.language as T
from tilelang import _ffi
from tilelang.errors import TileLangArgumentError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
kernel_mod = _sys.modules["tilelang.jit.kernel"]


# ---------------------------------------------------------------------------------------------
# issue 10 item 5: the simplifier ordered terms by a hash of node addresses, so the same program
# gave different source in different processes.

_SOURCES = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from tilelang import _ffi
# Shift the heap differently in each process so that any order taken from addresses shows.
junk = [_ffi.var("i", "int32") for _ in range(int(sys.argv[2]))]
import kernels as K
out = {}
for name, f in K.all_kernels() + [("axpb", K.axpb())]:
    out[name + ":cpu"] = _ffi.codegen_cpu(f)
    out[name + ":cuda sm_80"] = _ffi.codegen_cuda(f, "cuda -arch=sm_80")
print(json.dumps(out))
"""


def _sources_in_new_process(junk, seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    r = subprocess.run([sys.executable, "-c", _SOURCES, HERE, str(junk)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_nondeterministic_source():
    a = _sources_in_new_process(0, 1)
    b = _sources_in_new_process(3917, 2)
    assert a.keys() == b.keys() and len(a) == 2 * (len(K.all_kernels()) + 1)
    differ = [k for k in a if a[k] != b[k]]
    assert not differ, f"generated source differs between processes for {differ}"


def test_simplifier_order_ignores_addresses():
    # Two distinct vars that print alike: the order follows the program, whatever their addresses.
    for _ in range(20):
        i, j = _ffi.var("i", "int32"), _ffi.var("i", "int32")
        e = _ffi.binary("add", _ffi.binary("mul", i, _ffi.int_imm("int32", 64)), j)
        assert _ffi.print_expr(_ffi.simplify_expr(e)) == _ffi.print_expr(e)


# ---------------------------------------------------------------------------------------------
# issue 10 item 6 / issue 20: every scalar crossed into the kernel as a double.

def _store_scalar(dtype, out_dtype=None):
    out_dtype = out_dtype or dtype

    @T.prim_func
    def store_scalar(O: T.Tensor((1,), out_dtype), s: dtype):
        with T.Kernel(1, threads=32) as bx:
            O[0] = s

    return store_scalar


_EXACT = [("int64", 2**53 + 1), ("int64", 2**63 - 1), ("int64", -2**63), ("uint64", 2**64 - 1),
          ("uint32", 2**32 - 1), ("int8", -128), ("uint8", 255), ("int16", -32768), ("float64", 0.1),
          ("float32", 0.1), ("float16", 1.0 + 2**-10 + 2**-12), ("bfloat16", 3.14159)]


def _np(dtype):
    return kernel_mod._np_dtype(dtype)


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_lossy_scalar_abi(backend):
    for dtype, value in _EXACT:
        func = _store_scalar(dtype)
        if backend == "cpu":
            k = tilelang.compile(func, target="cpu")
        else:
            k = tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator")
        o = np.zeros(1, _np(dtype))
        k(o, value)
        want = np.array([value]).astype(_np(dtype))  # the value rounded once, to the declared type
        assert o.tobytes() == want.tobytes(), (backend, dtype, value, o, want)


def test_lossy_scalar_abi_cuda_packing():
    """The CUDA launcher's argument slots hold each scalar as the kernel declares it (no GPU needed)."""
    for dtype, value in _EXACT:
        k = tilelang.compile(_store_scalar(dtype), target="cuda -arch=sm_80", execution_backend="emulator")
        args = [kernel_mod._to_arg(np.zeros(1, _np(dtype)), k.func, 0)[0], kernel_mod._to_arg(value, k.func, 1)[0]]
        slots = k._mod.pack_args(args)
        assert len(slots) == 16
        want = np.array([value]).astype(_np(dtype)).tobytes()
        assert slots[8:8 + len(want)] == want and slots[8 + len(want):] == bytes(8 - len(want)), (dtype, slots.hex())
        # the kernel declares the parameter with that type
        decl = {"int64": "int64_t", "uint64": "uint64_t", "uint32": "uint32_t", "int8": "int8_t", "uint8": "uint8_t",
                "int16": "int16_t", "float64": "double", "float32": "float", "float16": "half_t",
                "bfloat16": "bfloat16_t"}[dtype]
        assert f"{decl} s" in k.get_kernel_source(), k.get_kernel_source()


@pytest.mark.parametrize("dtype,value,msg", [
    ("int64", 2**63, "out of its range"), ("int32", 2**31, "out of its range"), ("uint64", -1, "out of its range"),
    ("uint64", 2**64, "out of its range"), ("int64", 10**400, "out of its range"),
    ("float16", 70000.0, "out of its range"), ("float32", 1e39, "out of its range"),
    ("float32", 10**400, "out of its range"), ("int32", 1.5, "pass an integer")])
def test_lossy_scalar_abi_out_of_range(dtype, value, msg):
    k = tilelang.compile(_store_scalar(dtype), target="cpu")
    with pytest.raises(TileLangArgumentError, match=msg) as e:
        k(np.zeros(1, _np(dtype)), value)
    assert "'s'" in str(e.value)
