"""The `tilelang` command line (python -m tilelang): check, info, trace; output and exit codes."""
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

BROKEN = '''

@T.prim_func
def broken(A: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((128, 64), "float16")
        T.copy(A, B_shared)
        T.copy(A_s, C)
'''

OVER_LIMIT = '''import tilelang.language as T


@T.prim_func
def big(A: T.Tensor((1024, 1024), "float16"), B: T.Tensor((1024, 1024), "float16"), C: T.Tensor((1024, 1024), "float16")):
    with T.Kernel(4, 4, threads=256) as (bx, by):
        A_s = T.alloc_shared((256, 64), "float16")
        B_s = T.alloc_shared((64, 256), "float16")
        C_l = T.alloc_fragment((256, 256), "float32")
        T.clear(C_l)
        for k in T.Pipelined(16, num_stages=3):
            T.copy(A[by * 256, k * 64], A_s)
            T.copy(B[k * 64, bx * 256], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * 256, bx * 256])
'''


def tilelang(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "tilelang", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    text = (ROOT / "examples" / "gemm_cpu_demo.py").read_text()
    demo = text[:text.index("\n\ndef main")] + "\n"
    (folder / "gemm.py").write_text(demo)
    (folder / "gemm_broken.py").write_text(demo + BROKEN)
    (folder / "big.py").write_text(OVER_LIMIT)
    return folder


def test_check_clean_file_exits_zero(files):
    rc, out, err = tilelang("check", "gemm.py", cwd=files)
    assert rc == 0, out + err
    assert out == "gemm.py: 1 of 1 kernel(s) compiled for 'cuda -arch=sm_80'; 0 error(s), 0 warning(s)\n"


def test_check_reports_errors_at_line_and_column(files):
    rc, out, err = tilelang("check", "gemm_broken.py", "big.py", "--target", "cuda -arch=sm_86", cwd=files)
    assert rc == 1, out + err
    lines = out.splitlines()
    src = (files / "gemm_broken.py").read_text().split("\n")
    row = next(i for i, t in enumerate(src) if "T.copy(A, B_shared)" in t)
    col = src[row].index("B_shared") + 1
    assert lines[0] == f"gemm_broken.py:{row + 1}:{col}: error: name 'B_shared' is not defined"
    assert lines[1] == "gemm_broken.py: 1 of 1 kernel(s) compiled for 'cuda -arch=sm_86'; 1 error(s), 0 warning(s)"
    # the shared-memory error points at `with T.Kernel` and carries the per-buffer table, indented
    assert lines[2] == ("big.py:6:5: error: kernel 'big' needs 196608 bytes of shared memory, over the 101376-byte "
                        "limit of sm_86; reduce the tile sizes or num_stages:")
    assert re.fullmatch(r"    A_s\s+256x64\s+float16\s+3\s+98304\s+0", lines[4])
    assert lines[-1] == "big.py: 0 of 1 kernel(s) compiled for 'cuda -arch=sm_86'; 1 error(s), 0 warning(s)"


def test_check_hints(files):
    rc, out, _ = tilelang("check", "--hints", "gemm.py", cwd=files)
    assert rc == 0
    assert "gemm.py:21: hint: 128x32 float16 shared, 8192 B x 2 stages" in out.splitlines()
    assert "gemm.py:28: hint: mma.sync m16n8k16 f16, warps 2x2, 64x64 per warp" in out.splitlines()


def test_info(files):
    rc, out, err = tilelang("info", "gemm.py::matmul_kernel", cwd=files)
    assert rc == 0, out + err
    assert out.startswith("kernel 'matmul_kernel' (gemm.py:15) for 'cuda -arch=sm_80'\n")
    assert re.search(r"resources \(\S+ [\d.]+, sm_80\): 128 threads, \d+ registers/thread, 32768 B dynamic", out)
    assert re.search(r"^A_shared\s+128x32\s+float16\s+2\s+16384\s+0$", out, re.M)
    assert "\nlayouts:\n  C_local: mma_C(128x128, warps 2x2)\n" in out
    assert "  gemm.py:28: T.gemm: mma.sync m16n8k16 f16, warps 2x2" in out


def test_info_unknown_kernel_lists_the_kernels(files):
    rc, out, err = tilelang("info", "gemm.py::nope", cwd=files)
    assert rc == 1
    assert err.strip() == "tilelang info: no kernel named 'nope' in gemm.py (kernels: matmul_kernel)"


def test_trace(files, tmp_path):
    rc, out, err = tilelang("trace", "gemm.py::matmul_kernel", "--out", str(tmp_path / "t"), cwd=files)
    assert rc == 0, out + err
    assert out.splitlines()[-1] == f"written to {tmp_path / 't' / 'index.html'}"
    assert out.startswith("lower trace of 'matmul_kernel' for target 'cuda sm_80'")
    assert "Lower trace of <code>matmul_kernel</code>" in (tmp_path / "t" / "index.html").read_text()
    rc, out, err = tilelang("trace", "gemm_broken.py::broken", cwd=files)
    assert rc == 1
    assert "no kernel named 'broken'" in err and "name 'B_shared' is not defined" in err


def test_usage_errors():
    rc, out, err = tilelang("check")
    assert rc == 2 and "the following arguments are required: FILE" in err
    rc, out, err = tilelang("check", "/nonexistent/file.py")
    assert rc == 1 and "cannot read /nonexistent/file.py" in err
