"""scripts/gpu_check.sh must build offline on the GPU machine (which has no network): its build path runs
here with pip's index switched off, and the package it installs imports and compiles a CUDA kernel. The
GPU half of the script (scripts/gpu_check.py) needs a GPU and PyTorch; its emulator-side inputs are
exercised by the emulator tests."""
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_offline_build_path(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, PYTHON=sys.executable, TL_GPU_SITE=str(site), PIP_NO_INDEX="1")
    p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu_check.sh"), "--build-only"], env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "built offline" in p.stdout
    pkg = site / "tilelang"
    assert list(pkg.glob("_ffi*.so")) and (pkg / "include" / "tl_device" / "cuda" / "common.h").exists()
    # import the installed copy (not this checkout's editable install) and compile a kernel with it
    code = textwrap.dedent(f"""
        import sys
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                            and "skbuild" not in type(f).__name__.lower() and "scikit" not in type(f).__name__.lower()]
        sys.path.insert(0, {str(site)!r})
        sys.path.insert(0, {os.path.join(ROOT, "tests", "python")!r})
        import tilelang, kernels
        assert tilelang.__file__.startswith({str(site)!r}), tilelang.__file__
        k = tilelang.compile(kernels.matmul(256, 256, 256), target="cuda -arch=sm_90")
        assert "mma.sync" in k.get_ptx()
        print("ok", tilelang.__file__)
    """)
    q = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TILELANG_DISABLE_CACHE="1"))
    assert q.returncode == 0 and q.stdout.startswith("ok"), q.stdout + q.stderr


def test_script_uses_no_network():
    text = open(os.path.join(ROOT, "scripts", "gpu_check.sh")).read()
    for line in text.splitlines():
        if "pip install" in line and not line.lstrip().startswith("#"):
            assert "--no-index" in line, line
    assert "apt" not in text.replace("adapt", "")


def _dry_run(tmp_path, **env):
    """scripts/gpu_check.py end to end with the NumPy stand-in for torch (tests/gpu_check_dry) and every
    kernel in the emulator; returns (exit code, the JSON report, the output)."""
    out = tmp_path / "out"
    out.mkdir()
    e = dict(os.environ, TL_GPU_CHECK_DRY="1", OUT=str(out),
             PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "tests", "gpu_check_dry"), os.path.join(ROOT, "python")]),
             **env)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_check.py")], env=e, capture_output=True,
                       text=True, timeout=900)
    report = json.loads((out / "gpu_check.json").read_text()) if (out / "gpu_check.json").exists() else None
    return p.returncode, report, p.stdout + p.stderr


def test_dry_run_walks_every_section_and_passes(tmp_path):
    """The gate's own code (inputs, references, comparisons, bit-exact checks, timings, the table, the
    JSON) runs here, so it has not rotted when a session finally gets a GPU."""
    rc, report, text = _dry_run(tmp_path)
    assert rc == 0, text[-4000:]
    assert report["dry_run"] and report["ok"]
    sections = {r["section"] for r in report["rows"]}
    assert sections == {"reference", "kernels", "intrinsics", "hopper", "blackwell", "sanitizer", "timing"}, sections
    # both Blackwell families' cases, in the emulator
    assert sum(r["section"] == "blackwell" and r["status"] == "ok" for r in report["rows"]) >= 10
    statuses = {r["status"] for r in report["rows"]}
    assert statuses == {"ok", "skip"}, statuses
    assert [r["name"] for r in report["rows"] if r["status"] == "skip"] == ["gemm_tilelang_demo.py as written",
                                                                          "memcheck, racecheck"]
    assert sum(r["section"] == "intrinsics" and "bit-identical" in r["detail"] for r in report["rows"]) >= 14
    assert len(report["timings"]) >= 7 and "| section | check | result | detail |" in text


def test_dry_run_fails_the_gate_on_wrong_results(tmp_path):
    """With the reference products made wrong, every checked kernel is a MISMATCH and the gate exits 1."""
    rc, report, text = _dry_run(tmp_path, TL_GPU_CHECK_DRY_WRONG_MATMUL="1")
    assert rc == 1, text[-4000:]
    assert not report["ok"]
    bad = [r["name"] for r in report["rows"] if r["status"] == "MISMATCH"]
    assert any(n.startswith("gemm 200x136x72") for n in bad) and any("wgmma gemm" in n for n in bad), bad
    assert not [r for r in report["rows"] if r["status"] == "ERROR"]
