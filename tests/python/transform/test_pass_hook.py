"""The per-pass test hook (_ffi.run_pass, through passes.run) runs exactly what the pipeline runs: for every
backend kind (CPU included), and with a pass config that changes the output, every step of the pipeline run
alone on the pipeline's input to it gives the pipeline's output of it. The hook and Compile() read the same
steps (the backend's pipeline, src/target/<kind>/pipeline.cc, after Compile()'s front steps).

Before: the hook kept a table of six GPU passes of its own, dropped pass configs (tl.disable_tma_lower changed
the pipeline, not the hook), ran CUDA sm_80 when asked for hip, metal or opencl, refused the CPU target, and
could not run the CPU's GEMM rewrites at all: they ran in a hand-written list outside the driver, without the
IR verifier, traced as 0 ms. Writing the first version of this test found the pipeline itself
nondeterministic on sm_90a (below)."""
import pytest

import kernels as K
from tilelang import _ffi
from tilelang.errors import TileLangUnsupportedError

import passes

# (target, pass config): each config changes some step's output on that target (checked below).
CASES = [("cuda -arch=sm_80", {"tl.disable_async_copy": "1"}),
         ("cuda -arch=sm_90a", {"tl.disable_tma_lower": "1"}),
         ("cuda -arch=sm_90a", {"tl.disable_wgmma": "1"}),
         ("hip -arch=gfx942", {"tl.disable_async_copy": "1"}),
         ("metal", {"tl.disable_barrier_insertion": "1"}),
         ("opencl", {"tl.disable_barrier_insertion": "1"}),
         ("cpu", {"cpu.compile_flags": "-O1"}),  # no config changes the CPU IR (this one changes the build)
         ]


def _kernel(target):
    if target == "cpu":  # a GEMM the CPU's rewrites change (deeper K steps, block groups, tile caches, packing)
        return K.matmul(512, 512, 512, 32, 32, 32, dtype="float32")
    return K.matmul(256, 256, 128, 128, 128, 32, dtype="float16", num_stages=2)


def _check_alone_equals_pipeline(func, target, cfg):
    trace = _ffi.lower_trace_funcs(func, target, cfg)
    again = _ffi.lower_trace_funcs(func, target, cfg)
    names = [n for n, _ in trace]
    assert names == list(_ffi.pipeline_steps(target, cfg)), "the trace is the backend's list of steps"
    seen = {}
    for i, (name, out) in enumerate(trace):
        occurrence = seen.get(name, 0)
        seen[name] = occurrence + 1
        before = func if i == 0 else trace[i - 1][1]
        alone = _ffi.run_pass(name, before, target, cfg, occurrence)
        assert _ffi.print_func(alone) == _ffi.print_func(out), f"{name} alone differs from the pipeline's on {target} {cfg}"
        assert _ffi.structural_equal(alone, out), f"{name} alone differs structurally on {target} {cfg}"
        # and the pipeline is deterministic: TMA alignments were wrapped in the order of a map keyed by
        # address, so two runs on sm_90a nested them differently
        assert _ffi.structural_equal(again[i][1], out), f"two pipeline runs differ after {name} on {target} {cfg}"
    return trace


@pytest.mark.parametrize("target,cfg", CASES, ids=[f"{t}-{list(c)[0]}" for t, c in CASES])
def test_every_step_alone_is_the_pipelines_step(target, cfg):
    func = _kernel(target)
    with_cfg = _check_alone_equals_pipeline(func, target, cfg)
    without = _check_alone_equals_pipeline(func, target, {})
    differs = any(not _ffi.structural_equal(a, b) for (_, a), (_, b) in zip(with_cfg, without))
    # the config matters on this GPU target, so the hook would have shown a dropped config
    assert differs == (target != "cpu"), (target, cfg)


def test_the_cpu_gemm_rewrites_are_steps_of_the_driver():
    """Each of the four CPU GEMM rewrites is a traced step that changes this GEMM, with a time of its own, and the
    verifier runs after it (a pass that breaks an invariant fails there, naming itself)."""
    trace = _ffi.compile(_kernel("cpu"), "cpu", {}, "", True, "", False, True).trace
    by_name = {t[0]: t for t in trace}
    for name in ["CoalesceGemmKStepsCPU", "GroupGemmBlocksCPU", "CacheGemmTilesCPU", "PackGemmTilesCPU"]:
        assert by_name[name][3], f"{name} changes this GEMM"
    names = [t[0] for t in trace]
    assert names.index("PackGemmTilesCPU") < names.index("LowerTileOpsCPU")
    assert "ReportGemmPathsCPU" in names and not by_name["ReportGemmPathsCPU"][3]


def test_each_target_gets_its_own_features():
    """The same pass on the same input differs between CUDA and the other kinds (MFMA, simdgroup, no shuffles):
    the hook does not fall back to CUDA sm_80."""
    func = _kernel("cuda")
    outs = {}
    for target in ["cuda -arch=sm_80", "hip -arch=gfx942", "metal", "opencl"]:
        trace = _ffi.lower_trace_funcs(func, target, {})
        (i,) = [k for k, (n, _) in enumerate(trace) if n == "LowerTileOpsGPU"]
        outs[target] = _ffi.print_func(passes.run("LowerTileOpsGPU", trace[i - 1][1], target=target))
    assert len(set(outs.values())) == 4


def test_each_backend_lists_its_own_steps():
    """A backend's own passes are in its pipeline only: the shared passes never ask which backend they serve."""
    steps = {t: list(_ffi.pipeline_steps(t, {})) for t in ["cuda -arch=sm_80", "cuda -arch=sm_90a", "hip", "metal",
                                                             "opencl", "cpu"]}
    own = {"ElideWgmmaProxyFences": ["cuda -arch=sm_90a"], "WsNamedBarriers": ["cuda -arch=sm_90a"],
           "StagePrefetchInRegisters": ["hip"], "HoistSimdgroupStaging": ["metal"], "HoistSimdgroupOperands": ["metal"],
           "CheckMetalTypes": ["metal"],
           "HoistBranchBarriers": ["opencl"], "LowerTileOpsCPU": ["cpu"], "CacheGemmTilesCPU": ["cpu"]}
    for name, where in own.items():
        assert [t for t, s in steps.items() if name in s] == where, name
    shared = set(_ffi.shared_pass_names())
    for t, s in steps.items():
        assert s[0] == "HoistWorkspaces", t
        assert "ExpandViewTileOps" in s and "InjectBoundGuards" in s, t
    assert not shared & set(own), "a backend's own pass is not in the shared table"


def test_an_unknown_step_is_refused_with_the_targets_steps():
    with pytest.raises(TileLangUnsupportedError, match="has no step 'NoSuchPass'.*LayoutInference"):
        _ffi.run_pass("NoSuchPass", _kernel("cuda"), "cuda -arch=sm_80", {})
    with pytest.raises(TileLangUnsupportedError, match="has no step 'LayoutInference'.*LowerTileOpsCPU"):
        _ffi.run_pass("LayoutInference", _kernel("cpu"), "cpu", {})
    with pytest.raises(TileLangUnsupportedError, match="number 2 \\(it runs 2 times\\)"):
        _ffi.run_pass("Simplify", _kernel("cuda"), "cuda -arch=sm_80", {}, 2)
