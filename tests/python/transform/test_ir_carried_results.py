"""Pass results live in the IR (issue: no side tables between the CUDA passes). Regression tests for
the defects the side tables caused, named after them, and checks that each pass's decision is visible
in the IR it prints (so the lower trace shows it)."""
import re

import numpy as np

import tilelang
import tilelang.language as T
from tilelang import _ffi

SEED = 20261130


def _emu(func, **kw):
    return tilelang.compile(func, target="cuda", execution_backend="emulator", **kw)


def _trace(func, target="cuda -arch=sm_80"):
    return {name: _ffi.print_func(ir) for name, ir in _ffi.lower_trace_funcs(func, target)}


def test_same_named_shared_buffers_get_distinct_offsets():
    """Two shared buffers with one default name were both placed at `tl_smem + 256` while the
    planner's table said 0 and 256; the emulator never saw the plan. Now the plan is views of one
    byte buffer that the generated code and the emulator both execute."""

    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            X, Y = T.alloc_shared((64,), "float32"), T.alloc_shared((64,), "float32")
            T.copy(A, X)
            T.copy(B, Y)
            for i in T.Parallel(64):
                C[i] = X[i] * 2.0 + Y[i]

    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    a, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    c = np.zeros(64, np.float32)
    _emu(k)(a, b, c)
    np.testing.assert_allclose(c.astype(np.float64), 2.0 * a.astype(np.float64) + b, rtol=1e-6)

    src = tilelang.compile(k, target="cuda -arch=sm_80").get_kernel_source()
    offsets = sorted(int(m) for m in re.findall(r"reinterpret_cast<float\*>\(\w+ \+ (\d+)\)", src))
    assert offsets == [0, 256], src
    ir = _trace(k)["PlanSharedMemory"]
    assert re.search(r'= T.alloc_shared\(\(64,\), "float32", data=smem, byte_offset=0\)', ir), ir
    assert re.search(r'= T.alloc_shared\(\(64,\), "float32", data=smem, byte_offset=256\)', ir), ir


def test_copies_from_one_source_line_get_a_barrier():
    """Two T.copy into one shared tile made by a parse-time Python loop share a source line; barrier
    analysis told writers apart by source span and put no barrier between them (a write-after-write
    race: the fragment copy and the cp.async copy partition the tile over threads differently)."""

    @T.prim_func
    def k(A: T.Tensor((128,), "float16"), B: T.Tensor((128,), "float16")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((128,), "float16")
            S = T.alloc_shared((128,), "float16")
            T.fill(F, 1.0)
            for src in (F, A[0:128]):
                T.copy(src, S)
            T.copy(S, B)

    rng = np.random.default_rng(SEED)
    print("seed", SEED)
    a = rng.standard_normal(128).astype(np.float16)
    b = np.zeros(128, np.float16)
    _emu(k)(a, b)  # raises TileLangEmulationError on a race
    np.testing.assert_array_equal(b, a)
    ir = _trace(k)["InsertBarriers"]
    # one barrier between the two writes of S, one before S is read
    assert ir.count("T.call_intrin(\"void\", \"tl.syncthreads\")") >= 2, ir


def test_each_pass_decision_is_in_the_printed_ir():
    """The lower trace showed nothing for LayoutInference or PlanSharedMemory: their decisions lived in
    side tables. Now every decision is an IR value that prints."""
    import kernels

    t = _trace(kernels.matmul(256, 256, 256))
    leg = t["LegalizeTileOpsGPU"]
    assert 'with T.attr(A_shared, "tl.num_stages", 2):' in leg
    assert leg.count('with T.attr(None, "tl.copy_async", 1):') == 2
    lay = t["LayoutInference"]
    assert re.search(r'with T.attr\(C_local, "tl.layout", T.call_intrin\("handle", "fragment", "mma_C", '
                     r'"mma_C\(128x128, warps 2x2\)", "T.gemm accumulator at ', lay)
    assert 'annotations={"tl.loop_layout": T.call_intrin("handle", "fragment", ' in lay
    low = t["LowerTileOpsGPU"]
    assert 'with T.attr(None, "tl.tile_op", ' in low
    assert re.search(r'with T.attr\(A_shared, "tl.pipeline_managed", 1\):', low)
    assert "T.copy(" not in low and "T.gemm(" not in low
    plan = t["PlanSharedMemory"]
    assert re.search(r'smem = T.alloc_shared\(\(\d+,\), "uint8"\)', plan)
    views = re.findall(r'(\w+) = T.alloc_shared\(\((\d+),\), "float16", data=smem, byte_offset=(\d+)\)', plan)
    assert sorted(v[0] for v in views) == ["A_shared", "B_shared"]
    spans = sorted((int(off), int(off) + 2 * int(n)) for _, n, off in views)
    assert spans[0][1] <= spans[1][0], "live shared buffers overlap"
