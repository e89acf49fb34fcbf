"""The error suite: every program in tests/errors/ must fail with the expected exception.

Each file starts with ``# expect: <ExceptionClass>: <substring of the message>``; the line that
causes the error carries an ``# error-here`` marker, and the message must point at it with
``<file>:<line>:`` followed by the quoted source line and a caret. The programs run in this
process (runpy), so a crash of the native core would fail the whole run instead of hiding.
"""
import pathlib
import re
import runpy
import subprocess
import sys

import pytest

import tilelang
from tilelang import errors

ERROR_DIR = pathlib.Path(__file__).resolve().parent.parent / "errors"
CASES = sorted(ERROR_DIR.glob("*.py"))
_EXPECT = re.compile(r"^#\s*expect:\s*(\w+):\s*(.+?)\s*$")


def _expectation(path):
    first = path.read_text().splitlines()[0]
    m = _EXPECT.match(first)
    assert m, f"{path.name}: the first line must be `# expect: <Exception class name>: <message substring>`"
    return m.group(1), m.group(2)


def _marked_line(path):
    lines = [i for i, text in enumerate(path.read_text().splitlines(), 1) if "# error-here" in text]
    assert len(lines) <= 1, f"{path.name}: more than one `# error-here` marker"
    return lines[0] if lines else None


def test_suite_is_large_enough():
    assert len(CASES) >= 100


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_error_case(path):
    cls_name, substring = _expectation(path)
    expected_cls = getattr(errors, cls_name)
    with pytest.raises(tilelang.TileLangError) as info:
        runpy.run_path(str(path), run_name="__tilelang_error_case__")
    err = info.value
    msg = str(err)
    assert type(err) is expected_cls, f"expected {cls_name}, got {type(err).__name__}: {msg}"
    assert substring in msg, f"expected {substring!r} in the message:\n{msg}"
    line = _marked_line(path)
    if line is not None:
        assert f"{path}:{line}:" in msg, f"expected the location {path.name}:{line} in the message:\n{msg}"
        assert err.span is not None and err.span[1] == line
        text = path.read_text().splitlines()[line - 1].split("#")[0].strip()
        lines = msg.splitlines()
        assert any(text in ln for ln in lines[1:]), f"the offending source line is not quoted:\n{msg}"
        assert any(re.fullmatch(r"\s*\^+\s*", ln) for ln in lines), f"no caret line in the message:\n{msg}"


_ALL_IN_ONE = """
import pathlib, runpy, sys
import tilelang
n = 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.py")):
    try:
        runpy.run_path(str(path), run_name="__tilelang_error_case__")
    except tilelang.TileLangError:
        n += 1
print("raised", n)
"""


def test_suite_does_not_abort_the_process():
    # All programs in one child process: a native abort or crash would show as a bad exit status.
    r = subprocess.run([sys.executable, "-c", _ALL_IN_ONE, str(ERROR_DIR)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["raised", str(len(CASES))]


def test_gemm_k_pack_is_reported_where_it_has_no_effect():
    """k_pack is an AMD MFMA option (honoured on target 'hip'): accepted everywhere else with a warning,
    never silently ignored."""
    import warnings

    import tilelang.language as T

    @T.prim_func
    def packed(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.clear(C_l)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, k_pack=2)
            T.copy(C_l, C)

    for target, where in (("cuda -arch=sm_80", "CUDA"), ("cpu", "the CPU")):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tilelang.compile(packed, target=target)
        msgs = [str(x.message) for x in w]
        assert any("k_pack=2 is an AMD MFMA option; it has no effect on " + where in m for m in msgs), msgs
