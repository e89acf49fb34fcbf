"""The IR after every pass prints and re-parses to a structurally equal function (thread-level IR
included: builtins, facts, views, vector loops), for every kernel of the test suite on the CPU and
CUDA pipelines. So the lower trace shows every decision, and any pass can run on the IR it printed."""
import re

import pytest

import tilelang.language as T
from tilelang import _ffi

import kernels

KERNELS = kernels.all_kernels() + [("axpb", kernels.axpb())]


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
@pytest.mark.parametrize("name,func", KERNELS, ids=[k[0] for k in KERNELS])
def test_every_pass_output_reparses(name, func, target):
    for pass_name, f in _ffi.lower_trace_funcs(func, target):
        text = _ffi.print_func(f)
        g = T.parse_source(text)
        assert _ffi.structural_equal(f, g), f"{name}: the IR after {pass_name} does not re-parse equal:\n{text}"
        assert _ffi.print_func(g) == text, f"{name}: printing the re-parsed IR after {pass_name} differs"


def test_a_pass_runs_on_the_ir_it_printed():
    """Each CUDA pass, run on the re-parsed text of its input, gives what it gives on the input."""
    f = kernels.matmul(256, 256, 256)
    for name in ["LegalizeTileOpsGPU", "LayoutInference", "LowerTileOpsGPU", "PlanSharedMemory", "InsertBarriers"]:
        again = T.parse_source(_ffi.print_func(f))
        out, out_again = _ffi.run_pass(name, f, "cuda -arch=sm_80"), _ffi.run_pass(name, again, "cuda -arch=sm_80")
        # equal up to provenance: a layout's origin names the source line of the text it came from
        strip = lambda f: re.sub(r' at [^"]*:\d+"', ' at <src>"', _ffi.print_func(f))  # noqa: E731
        assert strip(out) == strip(out_again), name
        f = out
