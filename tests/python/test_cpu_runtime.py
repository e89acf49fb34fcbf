"""The CPU runtime around a compiled kernel: call-time argument checks and the disk cache.

Argument checks must raise tilelang.errors.TileLangArgumentError naming the parameter and what was
expected, before the kernel touches any memory. The cache tests point TILELANG_CACHE_DIR at their own
temporary directory, so they see exactly the entries they create.

Not covered here: a tensor on a non-CPU device (it needs torch, which this environment lacks).
"""
import functools
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kernels as K
import tilelang
from tilelang.jit import clear_compile_memo
import tilelang.language as T
from tilelang.errors import TileLangArgumentError

HERE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=None)
def _compile(factory, *args, out_idx=None, **kwargs):
    return tilelang.compile(factory(*args, **kwargs), target="cpu",
                            out_idx=list(out_idx) if out_idx is not None else None)


def _gemm():
    """C[64, 48] = A[64, 32] @ B[32, 48] in fp32 (static shapes)."""
    return _compile(K.matmul_transposed, 64, 48, 32, 32, 32, 16, dtype="float32", out_dtype="float32")


def _gemm_args(rng=None):
    rng = rng or np.random.default_rng(7)
    A = rng.standard_normal((64, 32)).astype(np.float32)
    B = rng.standard_normal((32, 48)).astype(np.float32)
    C = np.full((64, 48), -3.0, dtype=np.float32)
    return A, B, C


def _raises_arg_error(call, *needles):
    with pytest.raises(TileLangArgumentError) as info:
        call()
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, f"expected {needle!r} in the message: {msg}"
    return msg


# ---------------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------------
def test_valid_call_runs():
    A, B, C = _gemm_args()
    _gemm()(A, B, C)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_wrong_dtype():
    A, B, C = _gemm_args()
    msg = _raises_arg_error(lambda: _gemm()(A.astype(np.float64), B, C), "'A'", "float32", "float64")
    assert "dtype" in msg
    _raises_arg_error(lambda: _gemm()(A, B, C.astype(np.float16)), "'C'", "float32", "float16")
    assert np.all(C == -3.0), "the kernel ran despite the bad argument"


def test_wrong_shape():
    A, B, C = _gemm_args()
    msg = _raises_arg_error(lambda: _gemm()(A, np.ascontiguousarray(B[:31]), C), "'B'", "(32, 48)", "(31, 48)")
    assert "shape" in msg
    _raises_arg_error(lambda: _gemm()(A, B, np.zeros((48, 64), np.float32)), "'C'", "(64, 48)", "(48, 64)")
    assert np.all(C == -3.0)


def test_wrong_rank():
    A, B, C = _gemm_args()
    msg = _raises_arg_error(lambda: _gemm()(A, B, C.reshape(-1)), "'C'", "(64, 48)", "(3072,)")
    assert "2-d" in msg or "rank" in msg, msg
    _raises_arg_error(lambda: _gemm()(A.reshape(1, 64, 32), B, C), "'A'", "(64, 32)", "(1, 64, 32)")


def test_non_contiguous_transposed_view():
    A, B, C = _gemm_args()
    At = np.ascontiguousarray(A.T).T  # right shape and dtype, column-major strides
    assert At.shape == A.shape and not At.flags.c_contiguous
    msg = _raises_arg_error(lambda: _gemm()(At, B, C), "'A'", "contiguous")
    assert "strides" in msg
    # A view that skips rows is not contiguous either.
    wide = np.zeros((64, 96), np.float32)
    _raises_arg_error(lambda: _gemm()(A, B, wide[:, ::2]), "'C'", "contiguous")
    assert np.all(C == -3.0)


def test_symbolic_dim_bound_inconsistently():
    add = _compile(K.elementwise_add)
    a, b = np.ones(10, np.float32), np.ones(9, np.float32)
    msg = _raises_arg_error(lambda: add(a, b, np.ones(10, np.float32)), "'B'", "'n'", "10", "9")
    assert "A.shape[0]" in msg, msg
    c = np.zeros(11, np.float32)
    _raises_arg_error(lambda: add(a, np.ones(10, np.float32), c), "'C'", "'n'", "11")
    assert np.all(c == 0)
    # With out_idx the output is not an argument, but the inputs must still agree.
    add_out = _compile(K.elementwise_add, out_idx=(2,))
    _raises_arg_error(lambda: add_out(a, b), "'B'", "'n'")


def test_wrong_number_of_arguments():
    A, B, C = _gemm_args()
    _raises_arg_error(lambda: _gemm()(A, B), "takes 3", "2 were given")
    _raises_arg_error(lambda: _gemm()(A, B, C, C), "takes 3", "4 were given")
    add_out = _compile(K.elementwise_add, out_idx=(2,))
    x = np.ones(5, np.float32)
    _raises_arg_error(lambda: add_out(x, x, x), "takes 2 inputs", "got 3")
    _raises_arg_error(lambda: add_out(x), "takes 2 inputs", "got 1")


def test_scalar_parameter_checks():
    k = _compile(K.axpb)
    A, B = np.ones(3, np.float32), np.zeros(3, np.float32)
    _raises_arg_error(lambda: k(A, B, np.ones(1, np.float32), 1), "'alpha'", "scalar", "float32")
    _raises_arg_error(lambda: k(1.0, B, 1.0, 1), "'A'", "tensor", "(n,)")
    # An integer parameter does not silently truncate a float, nor wrap an out-of-range value.
    _raises_arg_error(lambda: k(A, B, 1.0, 1.5), "'beta'", "int32")
    _raises_arg_error(lambda: k(A, B, 1.0, 2**40), "'beta'", "int32")
    assert np.all(B == 0)
    k(A, B, 2, np.int64(3))  # an int for a float parameter and a NumPy integer are fine
    np.testing.assert_array_equal(B, np.full(3, 5.0, np.float32))


def test_not_a_tensor():
    A, B, C = _gemm_args()
    _raises_arg_error(lambda: _gemm()(A.tolist(), B, C), "'A'", "list")
    # With out_idx the inputs are still named by their parameter.
    scalar_out = _compile(K.axpb, out_idx=(1,))
    _raises_arg_error(lambda: scalar_out(np.ones(4, np.float32), "2.0", 1), "'alpha'", "str")
    _raises_arg_error(lambda: scalar_out(np.ones(4, np.float32), 2.0, 1.5), "'beta'", "int32")


def test_dlpack_tensor_argument():
    """Any DLPack exporter is accepted; the kernel writes into the exporter's memory."""

    class Exporter:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kwargs):
            return self._a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    A, B, C = _gemm_args()
    _gemm()(Exporter(A), Exporter(B), Exporter(C))
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-4)
    _raises_arg_error(lambda: _gemm()(Exporter(A.astype(np.float64)), B, C), "'A'", "float64")


def test_argument_error_is_a_value_error():
    assert issubclass(TileLangArgumentError, ValueError)
    assert issubclass(TileLangArgumentError, tilelang.TileLangError)


# ---------------------------------------------------------------------------------------------------
# Disk cache
# ---------------------------------------------------------------------------------------------------
def _cache_kernel(c):
    """A small kernel whose constant `c` makes it distinct: B = A * c + 1 over a dynamic length."""
    n = T.dynamic("n")

    @T.prim_func
    def scale(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    B[bx * 64 + i] = A[bx * 64 + i] * c + 1.0

    return scale


def _check_cache_kernel(kernel, c):
    A = np.random.default_rng(11).standard_normal(1000).astype(np.float32)
    B = np.full(1000, np.nan, np.float32)
    kernel(A, B)
    np.testing.assert_allclose(B, A.astype(np.float64) * c + 1.0, rtol=1e-6, atol=1e-6)


def _entries(root):
    """Cache entries: directories under root holding a kernel.so."""
    return sorted(os.path.dirname(os.path.join(d, "kernel.so")) for d, _, files in os.walk(root)
                  if "kernel.so" in files)


def _all_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root) for f in files)


def test_second_compile_is_from_cache_and_fast(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    t0 = time.perf_counter()
    k1 = tilelang.compile(_cache_kernel(3.0), target="cpu")
    t1 = time.perf_counter()
    assert not k1.from_cache
    assert len(_entries(tmp_path)) == 1
    clear_compile_memo()  # this test is about the disk cache, not the in-memory one
    k2 = tilelang.compile(_cache_kernel(3.0), target="cpu")  # a new but identical PrimFunc
    t2 = time.perf_counter()
    assert k2.from_cache
    assert len(_entries(tmp_path)) == 1
    first, second = t1 - t0, t2 - t1
    assert second < 0.5 and second < first / 3, f"cached compile took {second:.3f}s (first {first:.3f}s)"
    assert k2.get_kernel_source() == k1.get_kernel_source()
    _check_cache_kernel(k1, 3.0)
    _check_cache_kernel(k2, 3.0)
    # A different kernel is a different entry.
    k3 = tilelang.compile(_cache_kernel(4.0), target="cpu")
    assert not k3.from_cache
    assert len(_entries(tmp_path)) == 2
    _check_cache_kernel(k3, 4.0)


def test_disable_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    k1 = tilelang.compile(_cache_kernel(5.0), target="cpu")
    k2 = tilelang.compile(_cache_kernel(5.0), target="cpu")
    assert not k1.from_cache and not k2.from_cache
    assert _all_files(tmp_path) == [], f"TILELANG_DISABLE_CACHE=1 left files: {_all_files(tmp_path)}"
    _check_cache_kernel(k1, 5.0)
    _check_cache_kernel(k2, 5.0)


def test_cache_dir_with_a_quote_a_space_and_a_dollar(tmp_path, monkeypatch):
    """The host compiler starts from an argument vector, not a shell line: a quote, a space and a `$` in
    TILELANG_CACHE_DIR (the kernel is built there) reach it as they are."""
    cache = tmp_path / "it's a $HOME cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    clear_compile_memo()
    k = tilelang.compile(_cache_kernel(6.0), target="cpu")
    assert not k.from_cache
    (entry,) = _entries(cache)
    assert entry.startswith(str(cache) + os.sep)
    _check_cache_kernel(k, 6.0)
    clear_compile_memo()
    assert tilelang.compile(_cache_kernel(6.0), target="cpu").from_cache


def test_host_compiler_failure_shows_the_command(tmp_path, monkeypatch):
    """A failing build reports the command as one could paste it into a shell (the quote escaped) and
    what the compiler said; flags from cpu.compile_flags are separate arguments."""
    cache = tmp_path / "o'clock"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))
    clear_compile_memo()
    with pytest.raises(tilelang.errors.TileLangCompileError) as e:
        tilelang.compile(_cache_kernel(7.0), target="cpu",
                         pass_configs={"cpu.compile_flags": "-O2 -std=c++17 -fPIC -shared -fno-such-flag-xyz"})
    msg = str(e.value)
    assert "cd '" + str(cache).replace("'", "'\\''") in msg, msg
    assert " -fno-such-flag-xyz " in msg and msg.count("no-such-flag-xyz") >= 2, msg


_CHILD = textwrap.dedent("""
    import faulthandler; faulthandler.enable()
    import json, os, sys, time
    sys.path.insert(0, {here!r})
    import numpy as np
    import tilelang
    from test_cpu_runtime import _cache_kernel
    ready, go, c = sys.argv[1], sys.argv[2], float(sys.argv[3])
    open(ready, "w").close()
    deadline = time.time() + 60
    while go and not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.002)
    k = tilelang.compile(_cache_kernel(c), target="cpu")
    A = np.random.default_rng(os.getpid()).standard_normal(1000).astype(np.float32)
    B = np.full(1000, np.nan, np.float32)
    k(A, B)
    err = float(np.max(np.abs(B - (A.astype(np.float64) * c + 1.0))))
    print(json.dumps({{"from_cache": k.from_cache, "err": err}}))
""").format(here=HERE)


def _spawn(tmp_path, tag, c, go=""):
    env = dict(os.environ, TILELANG_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TILELANG_DISABLE_CACHE", None)
    ready = str(tmp_path / f"ready-{tag}")
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, ready, go, str(c)], env=env, cwd=HERE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, ready


def _finish(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"child failed (rc {proc.returncode}):\n{out}\n{err}"
    result = json.loads(out.strip().splitlines()[-1])
    assert result["err"] < 1e-5, result
    return result


def test_concurrent_compiles_in_two_processes(tmp_path, monkeypatch):
    go = str(tmp_path / "go")
    procs = [_spawn(tmp_path, i, 6.0, go) for i in range(2)]
    deadline = time.time() + 60
    while not all(os.path.exists(r) for _, r in procs) and time.time() < deadline:
        assert all(p.poll() is None for p, _ in procs), [p.communicate() for p, _ in procs]
        time.sleep(0.01)
    open(go, "w").close()  # both are ready: start compiling at the same moment
    results = [_finish(p) for p, _ in procs]
    assert len(results) == 2
    cache = tmp_path / "cache"
    entries = _entries(cache)
    assert len(entries) == 1, entries
    # No half-written library or temporary file is left behind by the race.
    assert set(os.listdir(entries[0])) <= {"kernel.so", "kernel.meta", "kernel.cc"}, os.listdir(entries[0])
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    k = tilelang.compile(_cache_kernel(6.0), target="cpu")
    assert k.from_cache
    _check_cache_kernel(k, 6.0)


def test_dropping_a_kernel_does_not_crash_the_process(tmp_path):
    """Dropping the last kernel unloads its library; OpenMP's idle worker threads must survive that
    (they used to crash the process when the OpenMP runtime was unloaded with the kernel)."""
    script = textwrap.dedent("""
        import faulthandler; faulthandler.enable()
        import gc, sys, time
        sys.path.insert(0, {here!r})
        import numpy as np
        import tilelang
        from test_cpu_runtime import _cache_kernel
        A = np.ones(1 << 17, np.float32)
        for round in range(2):  # the second round reloads the library from the cache
            k = tilelang.compile(_cache_kernel(9.0), target="cpu")
            B = np.zeros_like(A)
            k(A, B)
            assert np.all(B == 10.0)
            del k
            gc.collect()
            time.sleep(0.2)
        print("survived")
    """).format(here=HERE)
    env = dict(os.environ, TILELANG_CACHE_DIR=str(tmp_path))
    env.pop("TILELANG_DISABLE_CACHE", None)
    res = subprocess.run([sys.executable, "-c", script], env=env, cwd=HERE, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and "survived" in res.stdout, f"rc {res.returncode}\n{res.stdout}\n{res.stderr}"


@pytest.mark.parametrize("damage", ["truncate", "corrupt"])
def test_damaged_library_is_rebuilt(tmp_path, monkeypatch, damage):
    c = 7.0 if damage == "truncate" else 8.0
    # Build the entry in another process, so this one has never mapped the library.
    proc, _ = _spawn(tmp_path, "populate", c)
    assert _finish(proc)["from_cache"] is False
    cache = tmp_path / "cache"
    entries = _entries(cache)
    assert len(entries) == 1
    so = os.path.join(entries[0], "kernel.so")
    data = open(so, "rb").read()
    assert len(data) > 1000
    if damage == "truncate":
        damaged = data[:len(data) // 2]
    else:  # same size, scrambled bytes in the middle (code and symbol tables)
        mid = len(data) // 3
        damaged = data[:mid] + bytes(b ^ 0x5A for b in data[mid:2 * mid]) + data[2 * mid:]
    with open(so, "wb") as f:
        f.write(damaged)

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    k = tilelang.compile(_cache_kernel(c), target="cpu")
    assert not k.from_cache, "a damaged library was loaded from the cache"
    _check_cache_kernel(k, c)
    assert open(so, "rb").read() != damaged
    # The entry is whole again: the next compile loads it.
    clear_compile_memo()
    k2 = tilelang.compile(_cache_kernel(c), target="cpu")
    assert k2.from_cache
    _check_cache_kernel(k2, c)
