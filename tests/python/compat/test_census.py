"""scripts/tilelang_census.py on a stand-in checkout: a name counts as present only when it is implemented; the
names that exist to refuse (an unsupported dtype) count as missing, and using them raises."""
import os
import subprocess
import sys

import pytest

import tilelang.language as T
from tilelang.errors import TileLangUnsupportedError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_refusing_names_count_as_missing(tmp_path):
    ex = tmp_path / "examples" / "demo"
    ex.mkdir(parents=True)
    (ex / "k.py").write_text("import tilelang.language as T\nT.copy(a, b)\nT.gemm(a, b, c)\nT.tcgen05_gemm_blockscaled(a, b)\nx = T.float8_e4m3fnuz\n"
                             "T.no_such_name()\n")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tilelang_census.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("3 of 5 T.* names present (60.0%)"), out
    for n in ("float8_e4m3fnuz", "no_such_name"):
        assert f"missing T.{n}:" in out, out


def test_refusing_names_raise_when_used():
    with pytest.raises(TileLangUnsupportedError, match="fnuz"):
        T.float8_e4m3fnuz()
