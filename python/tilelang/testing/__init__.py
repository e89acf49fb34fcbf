"""tilelang.testing: the helpers TileLang's own tests use, working on NumPy arrays and torch tensors.

Markers (`requires_cuda`, ...) are pytest skip markers decided by what this machine has: they say why a
test did not run, they never make a test pass.
"""
import os
import random
import sys

import numpy as np

from .. import _ffi


def _np(x):
    if type(x).__module__.startswith("torch"):
        x = x.detach()
        if x.dtype.is_floating_point and x.dtype != getattr(sys.modules.get("torch"), "float64", None):
            x = x.float()
        return x.cpu().numpy()
    return np.asarray(x)


def set_random_seed(seed=42):
    """Seeds Python's, NumPy's and (if installed) torch's generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F811
        except ImportError:
            torch = None
    if torch is not None:
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)


def assert_allclose(actual, desired, rtol=1e-7, atol=0, equal_nan=True, err_msg="", verbose=True):
    """numpy.testing.assert_allclose on arrays or tensors (compared in float64)."""
    a = _np(actual).astype(np.float64) if _np(actual).dtype.kind in "fiub" else _np(actual)
    d = _np(desired).astype(np.float64) if _np(desired).dtype.kind in "fiub" else _np(desired)
    np.testing.assert_allclose(a, d, rtol=rtol, atol=atol, equal_nan=equal_nan, err_msg=err_msg, verbose=verbose)


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=True, base_name="LHS", ref_name="RHS"):
    """Like TileLang's: passes when at most `max_mismatched_ratio` of the elements differ by more than
    atol + rtol * |b|; otherwise raises AssertionError with the count and the worst elements."""
    a = _np(tensor_a).astype(np.float64)
    b = _np(tensor_b).astype(np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shapes differ: {base_name} {a.shape} vs {ref_name} {b.shape}")
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    n_bad, total = int(bad.sum()), a.size
    if n_bad > max_mismatched_ratio * total:
        idx = np.argwhere(bad)[:5]
        worst = ", ".join(f"{tuple(int(i) for i in ix)}: {a[tuple(ix)]!r} vs {b[tuple(ix)]!r}" for ix in idx)
        raise AssertionError(f"{n_bad} of {total} elements ({n_bad / max(total, 1):.2%}) of {base_name} and {ref_name} "
                             f"differ beyond atol={atol}, rtol={rtol} (allowed ratio {max_mismatched_ratio}); "
                             f"first: {worst}")
    if verbose:
        print(f"{base_name} and {ref_name} match ({n_bad} of {total} elements outside the tolerance)")


def _cuda_arch():
    try:
        if _ffi.cuda_driver_available():
            return _ffi.cuda_device_arch(0)
    except Exception:
        return None
    return None


def _sm(arch):
    digits = "".join(c for c in (arch or "") if c.isdigit())
    return (int(digits[:-1]), int(digits[-1])) if len(digits) >= 2 else None


def _skipif(cond, reason):
    import pytest

    return pytest.mark.skipif(cond, reason=reason)


def requires_cuda(func=None):
    """Skip marker: the test needs a CUDA GPU (and its driver)."""
    mark = _skipif(_cuda_arch() is None, "needs a CUDA GPU")
    return mark(func) if func is not None else mark


def requires_cuda_compute_version(major, minor=0, mode="ge"):
    """Skip marker: the test needs a GPU of compute capability (major, minor) (mode: ge, gt, le, lt, eq)."""
    cc = _sm(_cuda_arch())
    ops = {"ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b,
           "lt": lambda a, b: a < b, "eq": lambda a, b: a == b}
    ok = cc is not None and ops[mode](cc, (major, minor))
    return _skipif(not ok, f"needs a CUDA GPU with compute capability {mode} {major}.{minor}")


def requires_cuda_compute_version_ge(major, minor=0):
    return requires_cuda_compute_version(major, minor, "ge")


def requires_cuda_compute_version_eq(major, minor=0):
    return requires_cuda_compute_version(major, minor, "eq")


def requires_cuda_compute_version_le(major, minor=0):
    return requires_cuda_compute_version(major, minor, "le")


def requires_rocm(func=None):
    mark = _skipif(True, "the HIP backend is not implemented in TileLang-C++")
    return mark(func) if func is not None else mark


def requires_metal(func=None):
    mark = _skipif(True, "the Metal backend is not implemented in TileLang-C++")
    return mark(func) if func is not None else mark


def requires_package(*names):
    import importlib.util

    missing = [n for n in names if importlib.util.find_spec(n) is None]
    return _skipif(bool(missing), f"needs the package(s) {missing}")


def main():
    """Runs the calling test file with pytest (TileLang test files end with tilelang.testing.main())."""
    import pytest

    caller = sys._getframe(1).f_globals.get("__file__")
    sys.exit(pytest.main([caller or ".", "-q"] + sys.argv[1:]))
