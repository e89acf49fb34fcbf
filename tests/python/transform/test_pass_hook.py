"""The per-pass test hook (_ffi.cuda_pass, through passes.run) runs exactly what the pipeline runs: for every
GPU backend kind, and with a pass config that changes the output, a pass run alone on the pipeline's input to
it gives the pipeline's output of it. Before, the hook kept a table of its own: it dropped every config but
three (tl.disable_tma_lower changed the pipeline, not the hook) and, asked for hip, metal or opencl, ran
CUDA sm_80's features without a word. Writing this test found the pipeline itself nondeterministic on sm_90a
(below)."""
import pytest

import kernels as K
from tilelang import _ffi
from tilelang.errors import TileLangUnsupportedError

import passes

HOOK_PASSES = ["LegalizeTileOpsCUDA", "LayoutInference", "LowerTileOpsCUDA", "SplitInteriorBlocks",
               "PlanSharedMemory", "InsertBarriers"]

# (target, pass config): each config changes some pass's output on that target (checked below).
CASES = [("cuda -arch=sm_80", {"tl.disable_async_copy": "1"}),
         ("cuda -arch=sm_90a", {"tl.disable_tma_lower": "1"}),
         ("cuda -arch=sm_90a", {"tl.disable_wgmma": "1"}),
         ("hip -arch=gfx942", {"tl.disable_async_copy": "1"}),
         ("metal", {"tl.disable_barrier_insertion": "1"}),
         ("opencl", {"tl.disable_barrier_insertion": "1"})]


def _kernel():
    return K.matmul(256, 256, 128, 128, 128, 32, dtype="float16", num_stages=2)


def _check_alone_equals_pipeline(func, target, cfg):
    trace = _ffi.lower_trace_funcs(func, target, cfg)
    again = _ffi.lower_trace_funcs(func, target, cfg)
    names = [n for n, _ in trace]
    checked = 0
    for i, (name, out) in enumerate(trace):
        if name not in HOOK_PASSES or i == 0:
            continue
        alone = passes.run(name, trace[i - 1][1], target=target, **cfg)
        assert _ffi.print_func(alone) == _ffi.print_func(out), f"{name} alone differs from the pipeline's on {target} {cfg}"
        assert _ffi.structural_equal(alone, out), f"{name} alone differs structurally on {target} {cfg}"
        # and the pipeline is deterministic: TMA alignments were wrapped in the order of a map keyed by
        # address, so two runs on sm_90a nested them differently
        assert _ffi.structural_equal(again[i][1], out), f"two pipeline runs differ after {name} on {target} {cfg}"
        checked += 1
    assert checked >= 5, names
    return trace


@pytest.mark.parametrize("target,cfg", CASES, ids=[f"{t}-{list(c)[0]}" for t, c in CASES])
def test_a_pass_alone_is_the_pipelines_pass(target, cfg):
    func = _kernel()
    with_cfg = _check_alone_equals_pipeline(func, target, cfg)
    without = _check_alone_equals_pipeline(func, target, {})
    # the config matters on this target, so the hook would have shown a dropped config
    assert any(not _ffi.structural_equal(a, b) for (_, a), (_, b) in zip(with_cfg, without)), (target, cfg)


def test_each_target_gets_its_own_features():
    """The same pass on the same input differs between CUDA and the other kinds (MFMA, simdgroup, no shuffles):
    the hook no longer falls back to CUDA sm_80."""
    func = _kernel()
    outs = {}
    for target in ["cuda -arch=sm_80", "hip -arch=gfx942", "metal", "opencl"]:
        trace = _ffi.lower_trace_funcs(func, target, {})
        (i,) = [k for k, (n, _) in enumerate(trace) if n == "LowerTileOpsCUDA"]
        outs[target] = _ffi.print_func(passes.run("LowerTileOpsCUDA", trace[i - 1][1], target=target))
    assert len(set(outs.values())) == 4


def test_the_cpu_target_is_refused_by_the_gpu_pass_hook():
    with pytest.raises(TileLangUnsupportedError, match="has its own pipeline"):
        _ffi.cuda_pass("LayoutInference", _kernel(), "cpu", {})
