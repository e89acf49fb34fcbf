"""CUDA backend without a GPU: lowering, code generation and NVRTC compilation for sm_80..sm_90.

Every kernel is compiled for real; the tests read the PTX and ptxas' resource report.
"""
import os
import re

import pytest

import tilelang
from tilelang.jit import clear_compile_memo
import tilelang.language as T
from tilelang import _ffi
from tilelang.errors import (TileLangLayoutError, TileLangTypeError, TileLangResourceError, TileLangUnsupportedError,
                             TileLangArgumentError)

import kernels


ARCHS = ["sm_80", "sm_86", "sm_89", "sm_90"]

CUDA_KERNELS = {
    "reference_gemm": lambda: kernels.matmul(1024, 1024, 1024),
    "ragged_gemm": lambda: kernels.matmul(1000, 1000, 1000),
    "flashattn": lambda: kernels.flashattn(1, 4, 256, 64, is_causal=True),
    "rms_norm": lambda: kernels.rms_norm(1024, 256, 4),
    "softmax": lambda: kernels.softmax(1024, 256, 4),
    "splitk_gemm": lambda: kernels.matmul_splitk(512, 512, 1024, 128, 128, 32, split_k=4),
}
GEMMS = {"reference_gemm", "ragged_gemm", "splitk_gemm", "flashattn"}


@pytest.fixture(scope="module")
def compiled():
    """Each kernel x arch, compiled once for the module."""
    return {}


def _build(compiled, name, arch):
    key = (name, arch)
    if key not in compiled:
        compiled[key] = tilelang.compile(CUDA_KERNELS[name](), target=f"cuda -arch={arch}")
    return compiled[key]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(CUDA_KERNELS))
def test_compiles_for_arch(compiled, name, arch):
    k = _build(compiled, name, arch)
    ptx = k.get_ptx()
    assert re.search(r"^\.target\s+" + arch, ptx, re.M), "PTX targets the wrong architecture"
    res = k.get_resource_usage()
    assert res["registers"] > 0
    # registers only: no spills and no local-memory arrays (reductions and row vectors are indexed
    # with constants or select chains, never at run time)
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0, res
    if name in GEMMS:
        # sm_90: the tile copies are TMA on mbarriers (tests/python/test_tma.py); sm_80-89 keep cp.async
        copies = (("cp.async.bulk.tensor", "mbarrier.try_wait.parity") if arch == "sm_90" else
                  ("cp.async.cg.shared.global", "cp.async.wait_group"))
        for instr in ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ldmatrix.sync.aligned") + copies:
            assert instr in ptx, f"{instr} missing from the PTX of {name}"
    src = k.get_kernel_source()
    assert '#include "tl_device/cuda/common.h"' in src and "cutlass" not in src.lower() and "cute" not in src


def test_reference_gemm_resources(compiled):
    """128x128x32 tiles, 128 threads: no spills and no local memory at all."""
    k = _build(compiled, "reference_gemm", "sm_80")
    res = k.get_resource_usage()
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0 and res["stack_bytes"] == 0
    assert res["shared_bytes"] == 2 * (128 * 32 + 32 * 128) * 2  # two stages of A and B tiles, fp16
    assert "ld.local" not in k.get_ptx() and "st.local" not in k.get_ptx()
    # swizzled, so ldmatrix rows and cp.async chunks avoid bank conflicts
    assert "^" in k.get_kernel_source()
    # the accumulator's column pairs are stored with one 32-bit store each, never element by element
    stores = set(re.findall(r"st\.global\.\S+", k.get_ptx()))
    assert stores == {"st.global.v2.u16"}, stores
    assert 'T.call_intrin("void", "tl.vector_store", C[' in k.get_lowered_ir()  # explicit 2-lane stores


def test_striped_loads_and_stores_are_vectorised(compiled):
    k = _build(compiled, "softmax", "sm_80")
    assert k.layouts["x"] == "striped(4x256, 128 threads, vec 4)"
    assert set(re.findall(r"st\.global\.\S+", k.get_ptx())) == {"st.global.v4.b32"}
    assert set(re.findall(r"ld\.global\.\S+", k.get_ptx())) == {"ld.global.nc.v4.u32"}
    ir = k.get_lowered_ir()
    assert re.search(r'"tl.vector_load", x\[l \* 4\], X\[.*, 4, True\)', ir), ir
    assert '"tl.vector_store", Y[' in ir


def test_reference_gemm_pipeline_shape(compiled):
    """num_stages=2: one prologue group, a steady loop waiting for all but 0 groups, one barrier per step."""
    k = _build(compiled, "reference_gemm", "sm_80")
    ir = k.get_lowered_ir()
    loop = ir[ir.index("for k in"):]
    assert loop.count("T.call_intrin(\"void\", \"tl.syncthreads\")") == 1
    assert "T.call_intrin(\"void\", \"tl.cp_async_wait\", 0)" in loop
    assert ir.index("T.call_intrin(\"void\", \"tl.cp_async_commit\")") < ir.index("for k in")


def test_layouts_reported(compiled):
    k = _build(compiled, "flashattn", "sm_80")
    assert k.layouts["acc_s"] == "mma_C(64x64, warps 4x1)"
    assert k.layouts["scores_max"] == "mma_rows(64, warps 4x1)"
    assert k.layouts["acc_s_cast"] == k.layouts["acc_s"]


def test_pass_names_of_the_cuda_pipeline():
    """The pipeline reads as one list; what each pass decides is checked in transform/."""
    trace = _ffi.compile(kernels.matmul(1024, 1024, 1024), "cuda -arch=sm_80", {}, "", True, "", False, True).trace
    names = [t[0] for t in trace]
    assert names == ["HoistWorkspaces", "DropOtherTargetsAttrs", "MaterializeWsSchedule", "CheckThreadBindings", "ExpandViewTileOps", "Simplify",
                     "RasterizeBlocks",
                     "InjectBoundGuards", "ResolveBufferViews", "LegalizeTileOpsGPU", "PartitionDynamicParallel",
                     "LayoutInference", "LowerTileOpsGPU", "Simplify", "SplitInteriorBlocks",
                     "PlanSharedMemory", "InsertBarriers"]
    changed = {n: c for n, _, _, c in [t[:4] for t in trace]}
    assert all(changed[n] for n in ("LegalizeTileOpsGPU", "LayoutInference", "LowerTileOpsGPU")), (
        "legalize, layout inference and lowering each change the IR")
    assert not changed["PartitionDynamicParallel"], "no T.Parallel here has a run-time extent"
    assert not changed["HoistWorkspaces"] and not changed["CheckThreadBindings"], "no T.alloc_global, no lets"
    assert not changed["MaterializeWsSchedule"], "no T.annotate_ws_schedule"
    # the list is the backend's pipeline, as the per-pass hook sees it
    assert names == list(_ffi.pipeline_steps("cuda -arch=sm_80", {}))


def test_smem_over_limit_is_a_compile_error():
    f = kernels.matmul(4096, 4096, 4096, block_M=256, block_N=256, block_K=64, num_stages=3, threads=256)
    with pytest.raises(TileLangResourceError) as e:
        tilelang.compile(f, target="cuda -arch=sm_86")
    msg = str(e.value)
    assert "over the 101376-byte limit of sm_86" in msg
    for col in ("buffer", "shape", "dtype", "stages", "bytes"):
        assert col in msg
    assert re.search(r"A_shared\s+256x64\s+float16\s+3\s+98304", msg)
    # the same kernel fits the 227 KB of sm_90
    k = tilelang.compile(f, target="cuda -arch=sm_90")
    # (and its three TMA mbarriers, 24 bytes rounded to 32)
    assert k.get_resource_usage()["shared_bytes"] == 3 * (256 * 64 + 64 * 256) * 2 + 32


def test_copy_that_cannot_use_cp_async_is_reported():
    # K = 1001: rows are not 16-byte aligned, so A's tile copy must fall back, with the reason.
    from tilelang.errors import TileLangPerformanceWarning

    with pytest.warns(TileLangPerformanceWarning, match="does not use cp.async"):
        k = tilelang.compile(kernels.matmul(256, 256, 1001), target="cuda -arch=sm_80")
    assert any("A -> A_shared does not use cp.async" in w and "not a multiple of 8" in w for w in k.warnings)
    assert any("kernels.py" in w for w in k.warnings)


def test_layout_conflict_names_buffers_ops_and_lines():
    """tests/errors/cuda_layout_conflict.py: two gemms ask for different accumulator layouts; the message
    names the buffer, both layouts, the ops that asked for them and their lines."""
    import runpy

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "errors", "cuda_layout_conflict.py")
    with pytest.raises(TileLangLayoutError) as e:
        runpy.run_path(path, run_name="__tilelang_error_case__")
    msg = str(e.value)
    assert "layout conflict for fragment 'C_l'" in msg
    assert "mma_C(128x128, warps 4x1)" in msg and "mma_C(128x128, warps 1x4)" in msg
    assert "cuda_layout_conflict.py:14" in msg and "cuda_layout_conflict.py:15" in msg and "T.gemm accumulator" in msg


def test_unsupported_gemm_dtype():
    with pytest.raises(TileLangUnsupportedError,
                       match=r"float16, bfloat16, float32 \(as tf32\) or fp8 \(float8_e4m3fn / float8_e5m2\) A and B with a "
                             r"float32 accumulator.*got A float64, B float64, C float64"):
        tilelang.compile(kernels.matmul(256, 256, 256, dtype="float64", accum_dtype="float64"), target="cuda",
                         execution_backend="emulator")


def test_unknown_arch():
    with pytest.raises(TileLangUnsupportedError, match="sm_70 is not supported"):
        tilelang.compile(kernels.matmul(256, 256, 256), target="cuda -arch=sm_70")


def test_host_arrays_for_a_gpu_kernel_are_a_clear_error():
    import numpy as np

    k = tilelang.compile(kernels.elementwise_add(), target="cuda")
    a = np.ones(300, np.float32)
    with pytest.raises(TileLangArgumentError, match="runs on a CUDA GPU; move it with .cuda()"):
        k(a, a, a.copy())


def test_disk_cache_warm_start(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    f = kernels.matmul(512, 512, 512)
    k1 = tilelang.compile(f, target="cuda -arch=sm_80")
    assert not k1.from_cache
    clear_compile_memo()  # the disk cache, not the in-memory one
    k2 = tilelang.compile(f, target="cuda -arch=sm_80")
    assert k2.from_cache and k2.get_ptx() == k1.get_ptx()
    assert k2.get_resource_usage() == k1.get_resource_usage()
    # a corrupt cubin is detected and rebuilt
    for root, _, files in os.walk(tmp_path / "cuda"):
        for fn in files:
            if fn == "kernel.cubin":
                with open(os.path.join(root, fn), "wb") as fh:
                    fh.write(b"\x7fELFtruncated")
    clear_compile_memo()
    k3 = tilelang.compile(f, target="cuda -arch=sm_80")
    assert not k3.from_cache and k3.compiled.binary == k1.compiled.binary


def test_compiler_mma_fragment_matches_ptx_figure_and_plots(tmp_path):
    """The compiler's accumulator layout, checked against the PTX ISA's m16n8k16 figure (written out
    here independently) over a 2x2 warp grid, then drawn with plot_layout."""
    from tilelang.layout import mma_accumulator
    from tilelang.tools import plot_layout

    frag = mma_accumulator(64, 32, 2, 2)
    for i in range(64):
        for j in range(32):
            wm, wn = i // 32, j // 16
            ii, jj = i % 32, j % 16
            lane = (ii % 8) * 4 + (jj % 8) // 2
            reg = (ii % 16 // 8) * 2 + jj % 2
            thread = (wn * 2 + wm) * 32 + lane
            local = ((ii // 16) * 2 + jj // 8) * 4 + reg
            assert frag.thread_local(i, j) == (thread, local), (i, j)
    svg = tmp_path / "mma.svg"
    plot_layout(mma_accumulator(), str(svg))
    text = svg.read_text()
    assert "T0:0" in text and "T31:3" in text and "T4:2" in text


def test_lower_trace_for_cuda(tmp_path):
    from tilelang.tools import ir_lower_trace

    tr = ir_lower_trace(kernels.matmul(512, 512, 512), target="cuda -arch=sm_86", out_dir=str(tmp_path))
    names = [p.name for p in tr.passes]
    assert names[:13] == ["HoistWorkspaces", "DropOtherTargetsAttrs", "MaterializeWsSchedule", "CheckThreadBindings", "ExpandViewTileOps",
                          "Simplify",
                          "RasterizeBlocks", "InjectBoundGuards",
                         "ResolveBufferViews", "LegalizeTileOpsGPU", "PartitionDynamicParallel", "LayoutInference",
                         "LowerTileOpsGPU"]
    assert "for sm_86" in tr.final_source and "tl::mma_m16n8k16_f16" in tr.final_source
    files = os.listdir(tmp_path)
    assert "index.html" in files and any(f.endswith("final_source.cu") for f in files)
    html = (tmp_path / "index.html").read_text()
    assert "LowerTileOpsGPU" in html and "tl.ldmatrix" in html


def test_choices_list_every_lowering_decision(compiled, capsys):
    k = _build(compiled, "reference_gemm", "sm_80")
    text = "\n".join(k.choices)
    assert "T.copy A -> A_shared: 16-byte cp.async" in text and "T.copy B -> B_shared: 16-byte cp.async" in text
    assert "T.Pipelined: 2-stage cp.async pipeline (2 copies prefetched 1 iteration(s) ahead" in text
    assert "T.gemm: mma.sync m16n8k16 f16, warps 2x2, 64x64 per warp (4x8 mma tiles" in text
    assert "2-wide vector stores to C" in text
    assert all("kernels.py:" in c for c in k.choices)
    tilelang.compile(CUDA_KERNELS["softmax"](), target="cuda -arch=sm_80", verbose=True)
    out = capsys.readouterr().out
    assert "per-thread partials, 5-step warp butterfly" in out and "limit 166912 bytes on sm_80" in out


def _hinted(layout_of):
    """A GEMM whose A tile gets the layout `layout_of(A_s)` through T.annotate_layout."""

    @T.prim_func
    def hinted(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 128), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.annotate_layout({A_s: layout_of(A_s)})
            T.use_swizzle(panel_size=10)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C)

    return hinted


def test_use_swizzle_is_not_reported_as_a_hint():
    """T.use_swizzle is honoured (tests/python/test_use_swizzle.py); a user layout is too
    (tests/python/compat/test_annotate_layout.py): neither warns."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = tilelang.compile(_hinted(lambda buf: T.Layout((128, 64), lambda i, j: (i, j))), target="cuda -arch=sm_80")
    assert any("'A_s' has the user layout(128x64 -> 128x64)" in c for c in k.choices), k.choices


def test_annotated_swizzle_equal_to_the_compilers_is_honoured_silently():
    """TileLang programs annotate shared tiles with make_swizzled_layout: that is exactly the swizzle this
    compiler gives them (checked element by element), so there is nothing to warn about."""
    import warnings

    from tilelang.layout import make_swizzled_layout

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = tilelang.compile(_hinted(make_swizzled_layout), target="cuda -arch=sm_80")
    assert not any("annotate_layout" in c for c in k.choices)
    with pytest.raises(TileLangTypeError, match="the layout of 'A_s' is None"):
        _hinted(lambda buf: None)
    with pytest.raises(TileLangTypeError, match="takes a dict"):
        @T.prim_func
        def not_a_dict(A: T.Tensor((16,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                T.annotate_layout([A])


def test_reference_gemm_is_lean_where_sizes_divide():
    """Structural facts the SASS benchmark's counts rest on (benchmarks/bench_cuda_sass.py): at sizes that
    divide the tiles the epilogue carries no bound check, the pipelined prefetch no guard along K, and
    the PTX no integer division."""
    k = tilelang.compile(kernels.matmul(1024, 1024, 1024), target="cuda -arch=sm_80")
    ir = k.get_lowered_ir()
    epilogue = ir[ir.rindex('T.call_intrin("void", "tl.cp_async_wait", 0)'):]
    assert "if " not in epilogue and "if_then_else" not in epilogue, epilogue
    steady = ir[ir.index("for k in"):ir.rindex('T.call_intrin("void", "tl.cp_async_wait", 0)')]
    # the steady state has no branch: the prefetch's cp.async copies have no bound check of their own
    # and are issued every iteration with `k + 1 < 32` as their predicate (zero-filling a stage no later
    # iteration reads once the loop runs past the end)
    assert "if " not in steady, steady
    assert len(re.findall(r'"tl.cp_async", [^\n]*, 16, k \+ 1 < 32\)', steady)) == 2, steady
    assert not re.findall(r"\b(?:div|rem)\.[su]\d+", k.get_ptx())


def test_reference_gemm_main_loop_address_arithmetic_is_hoisted():
    """Issue 14: the swizzle XORs and thread-index divisions of the cp.async / ldmatrix addresses are
    computed once per thread before the main loop (src/target/cuda/shared_address_hoist.h), shared
    operands are 32-bit shared-window addresses (one cvta for the kernel, none per access), global
    sources are pointers advanced by the loop, and floordiv/floormod of provably non-negative values
    are shifts and masks."""
    k = tilelang.compile(kernels.matmul(1024, 1024, 1024), target="cuda -arch=sm_80")
    src = k.get_kernel_source()
    loop = src[src.index("for (int32_t k = 0"):src.rindex("tl::cp_async_wait<0>();")]
    assert "^" not in loop and "floordiv" not in loop and "floormod" not in loop, loop
    assert re.search(r"tl::ldmatrix<4, 0>\(\(&A_frag_0\[\(i \* 8\)\]\), \(A_shared_addr\w*\[kk\] \+", loop), loop
    assert re.search(r"tl::cp_async<16>\(\(A_shared_addr\w* \+ [^;]*, \(A_addr\w* \+", loop), loop
    assert "floordiv" not in src and "floormod" not in src
    assert k.get_ptx().count("cvta.to.shared") == 1
    # The main loop is unrolled by its 2 stages (issue 32: 109 SASS per iteration, was 130), which takes
    # 212 registers (was 168): two blocks per SM as at any count from 169 to 255, as TileLang's 216 and
    # Triton's 234 for this kernel; no spills.
    res = k.get_resource_usage()
    assert res["registers"] <= 216 and res["spill_stores"] == 0 and res["spill_loads"] == 0, res
    assert "#pragma unroll 2\n    for (int32_t k = 0" in src


def test_barriers_that_only_order_a_loop_against_earlier_code_run_once_before_it():
    """FlashAttention's K/V copies and its epilogue through O_shared need a barrier against what came
    before them, not between their own unrolled iterations: one __syncthreads before the loop (it was
    one per 16-byte chunk and one per output element)."""
    k = tilelang.compile(kernels.flashattn(1, 8, 1024, 64, is_causal=False), target="cuda -arch=sm_80")
    src = k.get_kernel_source()
    assert not re.search(r"#pragma unroll\n\s*for \([^\n]*\) \{\n\s*__syncthreads\(\);", src), src
    assert 1 <= src.count("__syncthreads()") <= 4


def test_equal_functions_from_different_lines_keep_their_own_diagnostics():
    """The in-process compile memo includes the functions' source locations: a structurally equal
    kernel written elsewhere (another file, another line) is compiled for itself, so its choices and
    warnings name its own lines (the memo used to hand back the first kernel's)."""
    def make():
        @T.prim_func
        def copy_kernel(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((64, 64), "float16")
                T.copy(A, S)
                T.copy(S, B)
        return copy_kernel

    first = make()

    @T.prim_func
    def copy_kernel(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            T.copy(A, S)
            T.copy(S, B)

    assert _ffi.structural_equal(first, copy_kernel)
    k1 = tilelang.compile(first, target="cuda -arch=sm_80")
    k2 = tilelang.compile(copy_kernel, target="cuda -arch=sm_80")
    assert k2 is not k1 and tilelang.compile(first, target="cuda -arch=sm_80") is k1
    line = lambda k: {c.split(":")[1] for c in k.choices if "T.copy A -> S" in c}
    assert line(k1) and line(k2) and line(k1) != line(k2), (k1.choices, k2.choices)


def test_second_compile_of_an_unchanged_function_is_a_lookup(tmp_path, monkeypatch):
    """In-memory cache keyed on the structural hash, target and options, before any lowering (its
    latency is in benchmarks/bench_cuda_compile.py)."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    f = kernels.matmul(256, 256, 256)
    k1 = tilelang.compile(f, target="cuda -arch=sm_80")
    assert tilelang.compile(f, target="cuda -arch=sm_80") is k1
    assert tilelang.compile(kernels.matmul(256, 256, 256), target="cuda -arch=sm_80") is k1  # equal, new object
    assert tilelang.compile(f, target="cuda -arch=sm_86") is not k1  # another target
    assert tilelang.compile(kernels.matmul(256, 256, 128), target="cuda -arch=sm_80") is not k1  # another function
    assert tilelang.compile(f, target="cuda -arch=sm_80", pass_configs={"tl.disable_async_copy": True}) is not k1


def test_source_map_ties_generated_lines_to_dsl_lines():
    import inspect

    f = kernels.matmul(256, 256, 256)
    k = tilelang.compile(f, target="cuda -arch=sm_80")
    src = k.get_kernel_source().splitlines()
    smap = k.get_source_map()
    lines, first = inspect.getsourcelines(kernels.matmul)
    gemm_line = first + next(i for i, t in enumerate(lines) if "T.gemm(" in t)
    gemm = [(a, b) for fn, line, a, b in smap if fn.endswith("kernels.py") and line == gemm_line]
    assert len(gemm) == 1
    a, b = gemm[0]
    body = "\n".join(src[a - 1:b])
    assert "tl::mma_m16n8k16_f16(" in body and "tl::ldmatrix<" in body and "cp_async" not in body
    assert all(fn.endswith("kernels.py") for fn, *_ in smap)


def _math_kernel():
    @T.prim_func
    def k(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                B[i] = T.exp2(A[i]) / (A[i] + 3.0) + T.sqrt(A[i])

    return k


def test_enable_fast_math_compiles_with_use_fast_math():
    """Before: `tl.enable_fast_math` (TileLang's TL_ENABLE_FAST_MATH, which its FlashAttention and MLA
    examples set) warned "accepted but not implemented". Expected: NVRTC's --use_fast_math, seen in the
    PTX as the approximate, denormal-flushing division, square root and exp2."""
    ops = {}
    for fast in (False, True):
        k = tilelang.compile(_math_kernel(), target="cuda -arch=sm_80", pass_configs={"tl.enable_fast_math": fast})
        ops[fast] = set(re.findall(r"\b((?:div|sqrt|ex2)\.[a-z.0-9]+)", k.get_ptx()))
    assert {"div.rn.f32", "sqrt.rn.f32", "ex2.approx.f32"} <= ops[False], ops
    assert {"div.approx.ftz.f32", "sqrt.approx.ftz.f32", "ex2.approx.ftz.f32"} <= ops[True], ops
    assert not ops[True] & {"div.rn.f32", "sqrt.rn.f32"}


def test_enable_fast_math_warns_where_it_does_nothing():
    with pytest.warns(UserWarning, match="CUDA target only"):
        tilelang.compile(_math_kernel(), target="cpu", pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})


def test_global_index_terms_of_an_unrolled_loop_are_widened_apart():
    """A fragment added into a global tile inside a serial loop: each thread's elements are an unrolled loop
    (l) whose terms are constants per copy. Before: every element's whole row index was widened to 64 bits
    at once, `(int64_t)(qb * 64 + f(tx) + g(l))`, a 64-bit address computation per element (FlashAttention
    backward's dQ atomics: 92 LEA per iteration on sm_80). Expected: `(int64_t)(qb * 64 + f(tx)) +
    (int64_t)(g(l))`, the second part an immediate offset of the RED, and far fewer LEA in the loop."""
    M, N = 512, 64

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_fragment((64, N), "float32")
            for qb in T.serial(M // 64):
                for i, j in T.Parallel(64, N):
                    acc[i, j] = X[qb * 64 + i, j] * 2.0
                T.atomic_add(Y[qb * 64:(qb + 1) * 64, :], acc)

    k = tilelang.compile(main, target="cuda -arch=sm_80")
    src = k.get_kernel_source()
    adds = [line for line in src.splitlines() if "atomic_add" in line]
    assert adds, src
    # the row index in two widened parts: the loop-invariant sum, then the unrolled loop's constant part
    assert all(re.search(r"\(\(int64_t\)\(\(*qb \* 64\) [^;]*\) \+ \(int64_t\)\(", a) for a in adds), adds
    ptx = k.get_ptx()
    assert "red.global.add.f32" in ptx or "atom.global.add.f32" in ptx


@pytest.mark.parametrize("arch,vector", [("sm_80", False), ("sm_90a", True)])
def test_tile_atomic_add_of_a_gemm_accumulator_is_a_vector_reduction_on_sm90(arch, vector):
    """T.atomic_add(global tile, accumulator): each thread holds pairs of adjacent columns. Before: one
    red.global.add.f32 per element everywhere (FlashAttention backward's dQ: 32 REDG per iteration on
    sm_90a, TileLang 16). Expected on sm_90+: red.global.add.v2.f32 per pair (REDG ...F32x2 in the SASS),
    scalar on sm_80 (the vector form needs sm_90), and the sums right in the emulator at ragged sizes
    (rows past the end guarded a pair at a time)."""
    import numpy as np
    from tilelang.tools.sass import find_cuobjdump
    M, N, K = 100, 64, 32

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
            A_s = T.alloc_shared((64, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((64, N), "float32")
            T.copy(A[bx * 64, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            for r in T.serial(2):
                T.atomic_add(C[bx * 64:(bx + 1) * 64, :], acc)

    k = tilelang.compile(main, target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    assert ("red.global.add.v2.f32" in ptx) == vector, ptx[:2000]
    assert any("2-wide vector atomic adds to C" in c for c in k.choices) == vector, k.choices
    if vector and find_cuobjdump() is not None:
        assert "F32x2" in k.get_sass()
    rng = np.random.default_rng(7)
    print("seed 7")
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    tilelang.compile(main, target=f"cuda -arch={arch}", execution_backend="emulator")(a, b, c)
    np.testing.assert_allclose(c, 2 * (a.astype(np.float64) @ b.astype(np.float64)), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_fragment_pairs_are_stored_to_shared_memory_whole(arch):
    """A gemm accumulator converted to float16 into a shared tile (FlashAttention backward's P^T and dS^T):
    each thread holds adjacent column pairs. Before: two 16-bit shared stores per pair, packed with PRMT
    (FlashAttention backward d64 on sm_80: 64 STS and 44 PRMT per iteration). Expected: one 4-byte store
    per pair on sm_80 (the compiler's swizzles keep 16-byte chunks whole), stmatrix .x4 on sm_90 (a warp's
    four 8x8 tiles per instruction, as TileLang's STSM), and the tile right in the emulator."""
    import numpy as np
    M, N, K = 64, 64, 32

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            P_s = T.alloc_shared((M, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            T.copy(acc, P_s)
            T.copy(P_s, C)

    k = tilelang.compile(main, target=f"cuda -arch={arch}")
    ptx = k.get_ptx()
    if arch == "sm_80":
        assert any("2-wide vector stores to P_s" in c for c in k.choices), k.choices
        assert re.search(r"st\.shared\.(b32|u32|v2\.b16|v2\.u16)", ptx), ptx[:3000]
    else:  # sm_90: four 8x8 tiles per stmatrix (the emulator's stmatrix is written from the PTX ISA)
        assert any("stmatrix .x4 stores to P_s (4 per thread)" in c for c in k.choices), k.choices
        assert ptx.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") >= 1, ptx[:3000]
    rng = np.random.default_rng(11)
    print("seed 11")
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    tilelang.compile(main, target=f"cuda -arch={arch}", execution_backend="emulator")(a, b, c)
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3,
                               atol=2e-3)
