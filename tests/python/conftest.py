"""Shared pytest setup for the Python tests.

Every test session compiles into a private kernel cache, so a run never pollutes the user's cache
(TILELANG_CACHE_DIR is pointed away from it). By default the cache is a fresh temporary directory,
removed at the end. TILELANG_TEST_CACHE_DIR names a persistent one instead (scripts/test.sh sets
it): the plain and the sanitised pytest runs, and the workers of a parallel run (pytest -n), then
share one cache, and a second run reuses the host-compiler, NVRTC and hipcc builds of the first.
That is safe because every entry is content-addressed: its key is the generated source with the
device headers, the compiler's identity and version and the flags, so a changed compiler or
changed generated code is a different entry, never a stale one. Tests that exercise the cache
itself point TILELANG_CACHE_DIR at their own directory with monkeypatch; the CPU backend's precompiled
headers stay in the session's cache (TILELANG_CPU_PCH_DIR), so such a test does not build them again.
"""
import os
import shutil
import sys
import tempfile

import pytest

# kernels.py (the DSL kernel factories) lives next to the tests.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session", autouse=True)
def _session_kernel_cache():
    # scripts/test_python_asan.sh: every worker of a parallel run must have imported the sanitised module
    expect = os.environ.get("TL_EXPECT_FFI_IN")
    if expect:
        import tilelang

        if expect not in tilelang._ffi.__file__:
            pytest.exit(f"this worker imported {tilelang._ffi.__file__}, not the module under {expect}", returncode=3)
    saved = {k: os.environ.get(k) for k in ("TILELANG_CACHE_DIR", "TILELANG_DISABLE_CACHE", "TILELANG_CPU_PCH_DIR")}
    shared = os.environ.get("TILELANG_TEST_CACHE_DIR")
    if shared:
        path = os.path.abspath(shared)
        os.makedirs(path, exist_ok=True)
    else:
        path = tempfile.mkdtemp(prefix="tilelang-test-cache-")
    os.environ["TILELANG_CACHE_DIR"] = path
    os.environ["TILELANG_CPU_PCH_DIR"] = os.path.join(path, "cpu-pch")
    os.environ.pop("TILELANG_DISABLE_CACHE", None)
    try:
        yield path
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if not shared:
            shutil.rmtree(path, ignore_errors=True)


# ----------------------------------------------------------------------------------------------- ptx_twin
# Every CUDA kernel a test launches in the thread-level emulator runs a second time at PTX level
# (execution_backend="ptx": the PTX NVRTC made of the same generated code), on copies of the same arguments, and
# the test fails where the two disagree: beyond float32 rounding (NVRTC's approximate exp2 / rsqrt against the
# exact ones) for floats, at all for integers. The whole suite costs about 7% more so (2 cores). Tests whose
# results depend on the order in which threads win atomics (slot claims) are marked `ptx_twin_unordered`: their
# arrays must hold the same values, in any order. NumPy arrays and torch tensors are compared; the `serial`
# (timing-sensitive) tests run once. TL_PTX_TWIN=0 turns the twin off.
@pytest.fixture(autouse=True)
def _ptx_twin(request):
    if os.environ.get("TL_PTX_TWIN") == "0":
        yield
        return
    import ml_dtypes
    import numpy as np

    unordered = request.node.get_closest_marker("ptx_twin_unordered") is not None
    # the serial tests are timing-sensitive (compile timeouts, the autotuner): they run once
    serial = request.node.get_closest_marker("serial") is not None

    from tilelang.jit import kernel as jk

    orig = jk.JITKernel._launch

    def is_torch(a):
        return type(a).__module__.startswith("torch")

    def copy(a):
        if isinstance(a, np.ndarray):
            return a.copy()
        return a.detach().clone() if is_torch(a) else a

    def values(a):
        """(float64 or integer NumPy values, the eps of a floating dtype or None); None for scalars."""
        if isinstance(a, np.ndarray):
            if str(a.dtype) == "float8_e8m0fnu":  # powers of two and NaN: the bytes must agree
                return a.view(np.uint8), None
            floating = a.dtype.kind == "f" or str(a.dtype) in ("bfloat16", "float8_e4m3fn", "float8_e5m2")
            return (a.astype(np.float64), float(ml_dtypes.finfo(a.dtype).eps)) if floating else (a, None)
        if is_torch(a):
            import torch

            t = a.detach().cpu()
            if t.is_floating_point():
                return t.double().numpy(), float(torch.finfo(t.dtype).eps)
            return t.numpy(), None
        return None

    def launch(self, full):
        if self.execution_backend != "emulator" or self.kind != "cuda" or serial:
            return orig(self, full)
        before = [copy(a) for a in full]
        out = orig(self, full)
        twin = getattr(self, "_ptx_twin_kernel", None)  # kept on the kernel itself: ids are reused
        if twin is None:
            twin = self._ptx_twin_kernel = jk.JITKernel(self.func, None, str(self.target), "ptx", self.pass_configs)
        # the twin's own device printf output (vprintf) is dropped: the test reads what its kernel printed once
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            twin._launch(before)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        for i, (w, g) in enumerate(zip(full, before)):
            wv, gv = values(w), values(g)
            if wv is None:
                continue
            (want, eps), (got, _) = wv, gv
            # float32 / float64: the approximate exp2 / rsqrt NVRTC uses; narrower: a few units in the last place
            # of the stored type, where those tiny differences cross a rounding boundary, in the output or in an
            # intermediate rounded to it first (FlashAttention's P in float16, then summed: 2 units were seen,
            # TL_TEST_SEED=783136438 in test_emulator.py::test_flashattention)
            # An element near zero from cancellation (a sum of terms of the output's size) carries those terms'
            # rounding, so the absolute floor is the same units of the argument's largest finite value
            # (TL_TEST_SEED=1557511258 in test_hopper.py::test_flashattention_forward_on_sm90a[causal-d128]:
            # -0.000798 against -0.000814 in an output of size 1, 1.6e-5 apart, 2% of the element)
            if eps is not None:
                rtol = max(1e-5, 4 * eps if 1e-6 < eps < 1e-2 else eps)  # (16-bit types; fp8 keeps one unit)
                finite = np.abs(want[np.isfinite(want)])
                atol = max(1e-6, rtol * float(finite.max())) if finite.size else 1e-6
                close = lambda g, w: np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)  # noqa: E731
            else:
                close = lambda g, w: g == w  # noqa: E731
            if unordered:
                got, want = np.sort(got, axis=None), np.sort(want, axis=None)
            ok = bool(np.all(close(got, want)))
            if not ok:
                bad = np.argwhere(~close(got, want))
                first = tuple(int(x) for x in bad[0]) if len(bad) else None
                raise AssertionError(
                    f"ptx_twin: argument {i} of kernel '{self.func.name}' differs between the thread-level emulator and "
                    f"the PTX emulator (target {self.target}): {len(bad)} elements, first at {first}: emulator "
                    f"{want[first] if first else ''}, PTX {got[first] if first else ''}")
        return out

    jk.JITKernel._launch = launch
    try:
        yield
    finally:
        jk.JITKernel._launch = orig
