"""Helpers of the pass tests: run one pass alone, compare functions structurally."""
from tilelang import _ffi

TARGET = "cuda -arch=sm_80"


def run(pass_name, func, target=TARGET, **configs):
    if pass_name in ("LowerTileOpsCPU", "InjectBoundGuards", "ExpandViewTileOps", "ResolveBufferViews"):  # after the CPU pipeline's Simplify
        return dict(_ffi.lower_trace_funcs(func, "cpu"))[pass_name]
    return _ffi.run_pass(pass_name, func, target, {k: str(v) for k, v in configs.items()})


def assert_equal(got, expected):
    assert _ffi.structural_equal(got, expected), (
        "got:\n" + _ffi.print_func(got) + "\nexpected:\n" + _ffi.print_func(expected))
