"""Pointer tables (TileLang's grouped GEMM over per-group tensors): `table: T.Tensor([n], T.ptr)` holds device
addresses (int64, as torch's data_ptr() values; NumPy's `a.ctypes.data` here) and
`A = T.make_tensor(table[i], shape, dtype)` is the tensor at one of them for the rest of the block. Run on the
CPU target and in the emulator (CUDA and HIP lowerings) against NumPy in float64 at ragged group sizes."""
import math
import warnings

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import (TileLangArgumentError, TileLangPerformanceWarning, TileLangSyntaxError,
                             TileLangTypeError, TileLangUnsupportedError)

SEED = 4242


def grouped_gemm_ptr(sizes, K, N, bM=32, bN=32, bK=32, threads=128, dtype=T.float16):
    """C_g = A_g @ B_g for each group g, written as TileLang's example_grouped_gemm_fwd_ptr.py writes it: the
    block finds its group from the tile offsets, then binds the group's tensors from the pointer tables."""
    count, max_M = len(sizes), max(sizes)
    total = sum(math.ceil(s / bM) for s in sizes)

    @T.prim_func
    def kernel(A_ptrs: T.Tensor([count], T.ptr), B_ptrs: T.Tensor([count], T.ptr), C_ptrs: T.Tensor([count], T.ptr),
               offsets: T.Tensor([count], T.int32)):
        with T.Kernel(total, T.ceildiv(N, bN), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bM, bK), dtype)
            B_s = T.alloc_shared((bK, bN), dtype)
            C_l = T.alloc_fragment((bM, bN), T.float32)
            g = T.alloc_var(dtype=T.int32)
            off = T.alloc_var(dtype=T.int32)
            g = 0
            off = 0
            for i in range(count):
                here = bx >= offsets[i]
                g = T.if_then_else(here, i, g)
                off = T.if_then_else(here, offsets[i], off)
            m0 = (bx - off) * bM
            A = T.make_tensor(A_ptrs[g], (max_M, K), dtype)
            B = T.make_tensor(B_ptrs[g], (K, N), dtype)
            C = T.make_tensor(C_ptrs[g], (max_M, N), dtype)
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bK), num_stages=1):
                T.copy(A[m0, ko * bK], A_s)
                T.copy(B[ko * bK, by * bN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[m0, by * bN])

    return kernel


def _groups(sizes, K, N, bM=32):
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    max_M = max(sizes)
    As = [np.zeros((max_M, K), np.float16) for _ in sizes]
    for a, s in zip(As, sizes):
        a[:s] = rng.standard_normal((s, K))
    Bs = [rng.standard_normal((K, N)).astype(np.float16) for _ in sizes]
    offsets = np.array([0] + list(np.cumsum([math.ceil(s / bM) for s in sizes])[:-1]), np.int32)
    return As, Bs, offsets


def _table(arrays):
    return np.array([a.ctypes.data for a in arrays], np.int64)


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80", "hip"])
def test_grouped_gemm_through_pointer_tables(target):
    sizes, K, N = [16, 33, 64], 96, 40  # ragged: 33 rows, N not a multiple of the 32-wide tile
    As, Bs, offsets = _groups(sizes, K, N)
    Cs = [np.full((max(sizes), N), np.nan, np.float16) for _ in sizes]
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TileLangPerformanceWarning)  # ragged N: synchronous loads of B
        k = tilelang.compile(grouped_gemm_ptr(sizes, K, N), target=target, **kw)
    k(_table(As), _table(Bs), _table(Cs), offsets)
    for g, (a, b, c, s) in enumerate(zip(As, Bs, Cs, sizes)):
        want = a[:s].astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c[:s].astype(np.float64), want, rtol=1e-2, atol=1e-2, err_msg=f"group {g}")
        # rows past the group's size are computed from its zero rows, inside the tensor's declared shape
        rows = min(math.ceil(s / 32) * 32, max(sizes))
        np.testing.assert_array_equal(c[s:rows], 0)


def test_generated_code_binds_the_tensors_and_compiles():
    f = grouped_gemm_ptr([16, 33, 64], 64, 64)
    k = tilelang.compile(f, target="cuda -arch=sm_80")  # through NVRTC
    src = k.get_kernel_source()
    assert "tl::half_t* A = reinterpret_cast<tl::half_t*>(" in src and "A_ptrs[" in src
    assert "cp.async.cg.shared.global" in k.get_ptx() and "mma.sync.aligned" in k.get_ptx()
    cpu = tilelang.compile(f, target="cpu").get_kernel_source()
    assert "* A = reinterpret_cast<" in cpu


def test_sm90_says_why_table_tensors_are_not_tma():
    f = grouped_gemm_ptr([64, 128], 128, 128, bM=64, bN=64, bK=64)
    with pytest.warns(TileLangPerformanceWarning, match=r"T.copy A -> A_s does not use TMA: 'A' is at an address "
                                                        r"read from a pointer table"):
        k = tilelang.compile(f, target="cuda -arch=sm_90a")
    assert "cp.async.bulk.tensor" not in k.get_ptx()


def test_pointer_tables_are_rejected_where_pointers_cannot_be_made():
    with pytest.raises(TileLangUnsupportedError, match=r"'C'\) is not supported on OpenCL") as e:
        tilelang.compile(grouped_gemm_ptr([16, 32], 32, 32), target="opencl")
    assert "test_ptr_tables.py:" in str(e.value)


def test_a_null_table_entry_is_reported_by_the_emulator():
    sizes, K, N = [32, 32], 32, 32
    As, Bs, offsets = _groups(sizes, K, N)
    Cs = [np.zeros((32, N), np.float16) for _ in sizes]
    k = tilelang.compile(grouped_gemm_ptr(sizes, K, N), target="cuda -arch=sm_80", execution_backend="emulator")
    bad = _table(Bs)
    bad[1] = 0
    with pytest.raises(TileLangArgumentError, match=r"tensor 'B' is bound to the null address"):
        k(_table(As), bad, _table(Cs), offsets)


_NULL_ENTRY_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import tilelang
from tilelang.errors import TileLangError
from test_ptr_tables import _groups, _table, grouped_gemm_ptr

sizes, K, N = [32, 32], 32, 32
As, Bs, offsets = _groups(sizes, K, N)
Cs = [np.zeros((32, N), np.float16) for _ in sizes]
k = tilelang.compile(grouped_gemm_ptr(sizes, K, N), target="cpu")
bad = _table(Bs)
bad[1] = 0
try:
    k(_table(As), bad, _table(Cs), offsets)
    print(json.dumps({"raised": None}))
except TileLangError as e:
    print(json.dumps({"raised": type(e).__name__, "message": str(e)}))
"""


def test_a_null_table_entry_is_reported_on_the_cpu():
    # issue 39: the CPU target died of SIGSEGV at the first access through the null address; it runs in a
    # child process so that a crash fails this test instead of the whole run
    import json
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _NULL_ENTRY_CHILD, here], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"the child process died (exit {r.returncode}):\n{r.stdout}\n{r.stderr}"
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["raised"] == "TileLangArgumentError", got
    lines = open(__file__).read().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "B = T.make_tensor(B_ptrs[g]" in text)
    assert f"test_ptr_tables.py:{line}:" in got["message"], got
    assert "tensor 'B' is bound to the null address (its pointer table entry is 0)" in got["message"], got


def test_make_tensor_misuse_is_an_error_at_its_line():
    with pytest.raises(TileLangTypeError, match=r"takes a 64-bit address .* not a int32 value") as e:
        @T.prim_func
        def narrow(tab: T.Tensor([4], T.int32), out: T.Tensor([4], T.float32)):
            with T.Kernel(1, threads=32) as bx:
                A = T.make_tensor(tab[0], (4,), T.float32)
                out[0] = A[0]
    assert "test_ptr_tables.py:" in str(e.value)
    with pytest.raises(TileLangSyntaxError, match=r"assign T.make_tensor\(table\[i\], shape, dtype\) to a name"):
        @T.prim_func
        def unnamed(tab: T.Tensor([4], T.ptr), out: T.Tensor([4], T.float32)):
            with T.Kernel(1, threads=32) as bx:
                out[0] = T.make_tensor(tab[0], (4,), T.float32)[0]


def test_print_shows_make_tensor_and_parses_back():
    f = grouped_gemm_ptr([16, 33], 32, 32)
    text = tilelang.script(f)
    assert 'A = T.make_tensor(A_ptrs[g[0]], (33, 32), "float16")' in text, text
    again = T.parse_source(text)
    assert tilelang.structural_equal(f, again)
    assert tilelang.script(again) == text


@pytest.mark.parametrize("where", ["cpu", "cuda", "hip"])
def test_tensors_from_a_table_are_not_shared_between_blocks(where):
    """Block g multiplies group g's own A and B, whose tiles have the same coordinates in every group. Before:
    the CPU target's cross-block tile cache (CacheGemmTilesCPU) keyed B's tiles by their coordinates only, so
    every block used group 0's B (every C_g was A_g @ B_0)."""
    G, M, N, K = 3, 64, 64, 64

    @T.prim_func
    def grouped(A_ptrs: T.Tensor([G], T.ptr), B_ptrs: T.Tensor([G], T.ptr), C_ptrs: T.Tensor([G], T.ptr)):
        with T.Kernel(G, threads=128) as bx:
            A = T.make_tensor(A_ptrs[bx], (M, K), T.float16)
            B = T.make_tensor(B_ptrs[bx], (K, N), T.float16)
            C = T.make_tensor(C_ptrs[bx], (M, N), T.float16)
            a_s = T.alloc_shared((M, K), T.float16)
            b_s = T.alloc_shared((K, N), T.float16)
            acc = T.alloc_fragment((M, N), T.float32)
            T.clear(acc)
            T.copy(A[0, 0], a_s)
            T.copy(B[0, 0], b_s)
            T.gemm(a_s, b_s, acc)
            T.copy(acc, C[0, 0])

    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    As = [rng.standard_normal((M, K)).astype(np.float16) for _ in range(G)]
    Bs = [rng.standard_normal((K, N)).astype(np.float16) for _ in range(G)]
    Cs = [np.zeros((M, N), np.float16) for _ in range(G)]
    table = lambda xs: np.asarray([x.ctypes.data for x in xs], np.int64)  # noqa: E731
    opts = {"target": "cpu"} if where == "cpu" else {"target": where, "execution_backend": "emulator"}
    kernel = tilelang.compile(grouped, **opts)
    kernel(table(As), table(Bs), table(Cs))
    for g in range(G):
        ref = As[g].astype(np.float64) @ Bs[g].astype(np.float64)
        np.testing.assert_allclose(Cs[g].astype(np.float64), ref, rtol=1e-2, atol=5e-2, err_msg=f"group {g}")
    if where == "cpu":
        assert not any("tile cache" in c for c in kernel.choices)
