"""Shared pytest setup for the Python tests.

Every test session compiles into a fresh, private kernel cache (TILELANG_CACHE_DIR points at a
temporary directory), so a run never reuses libraries built by an older compiler and never
pollutes the user's cache. Tests that exercise the cache itself point TILELANG_CACHE_DIR at their
own directory with monkeypatch.
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
    saved = {k: os.environ.get(k) for k in ("TILELANG_CACHE_DIR", "TILELANG_DISABLE_CACHE")}
    path = tempfile.mkdtemp(prefix="tilelang-test-cache-")
    os.environ["TILELANG_CACHE_DIR"] = path
    os.environ.pop("TILELANG_DISABLE_CACHE", None)
    try:
        yield path
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(path, ignore_errors=True)
