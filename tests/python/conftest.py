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
