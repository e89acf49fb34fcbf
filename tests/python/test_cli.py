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


def test_files_that_are_not_utf8_are_diagnostics(files):
    # issue 39: a UnicodeDecodeError traceback came out of `tilelang check`; now a diagnostic at the byte,
    # the other files still checked, exit code 1
    (files / "latin1.py").write_bytes(b"import tilelang.language as T\n# caf\xe9\n")
    rc, out, err = tilelang("check", "latin1.py", "gemm.py", cwd=files)
    assert rc == 1, out + err
    assert "Traceback" not in out + err, out + err
    lines = out.splitlines()
    assert lines[0].startswith("latin1.py:2:6: error: the file is not utf-8 text (byte 0xe9"), lines
    assert lines[1] == "gemm.py: 1 of 1 kernel(s) compiled for 'cuda -arch=sm_80'; 0 error(s), 0 warning(s)", lines
    rc, out, err = tilelang("info", "latin1.py", cwd=files)
    assert rc == 1 and "Traceback" not in err and err.startswith("latin1.py:2:6: error: the file is not utf-8"), err
    # a coding comment names the encoding, as Python honours it
    (files / "declared.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport tilelang.language as T\n# caf\xe9\n")
    rc, out, err = tilelang("check", "declared.py", cwd=files)
    assert rc == 0 and out == "declared.py: 0 of 0 kernel(s) compiled for 'cuda -arch=sm_80'; 0 error(s), 0 warning(s)\n", \
        out + err


# ---- TileLang's eager style and autotuned factories (files written here in TileLang's style) ----------------
EAGER = '''import tilelang
import tilelang.language as T


@tilelang.jit
def scale_add(A, B, block_M=64, block_N=64, dtype=T.float32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2.0 + \\
                B[by * block_M + i, bx * block_N + j]
    return C


@tilelang.jit  # tilelang: args=block_M=64, block_N=64, block_K=32, M=256
def gemm(A, B, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), accum_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), dtype)
        B_s = T.alloc_shared((block_K, block_N), dtype)
        C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


@tilelang.jit
def rows_scaled(X, s: T.float32, block=32):
    m = T.dynamic("m")
    X: T.Tensor((m, 16), T.float32)
    Y = T.empty((m, 16), T.float32)
    with T.Kernel(T.ceildiv(m, block), threads=block) as bx:
        for i, j in T.Parallel(block, 16):
            if bx * block + i < m:
                Y[bx * block + i, j] = X[bx * block + i, j] * s
    return Y


@tilelang.jit
def needs_blocks(A, block_M, block_N):
    M = T.const("M")
    A: T.Tensor((M,), T.float32)
    return A
'''

AUTOTUNED = '''import tilelang
import tilelang.language as T


def get_configs():
    return [{"block_M": bm, "block_N": bn} for bm in (64, 128) for bn in (64, 128)]


@tilelang.autotune(configs=get_configs(), warmup=1, rep=1)
@tilelang.jit(out_idx=[-1])  # tilelang: args=512, 512, 512
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


@tilelang.autotune(configs=[{"block": 64}, {"block": 128}])
@tilelang.jit
def add_one(X, block=32):
    N = T.const("N")
    X: T.Tensor((N,), T.float32)
    Y = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            Y[bx * block + i] = X[bx * block + i] + 1.0
    return Y


@tilelang.autotune(configs=[])
@tilelang.jit
def no_configs(n=8):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0

    return main
'''


@pytest.fixture(scope="module")
def styled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("styled")
    (folder / "eager.py").write_text(EAGER)
    (folder / "tuned.py").write_text(AUTOTUNED)
    return folder


def _line_of(folder, name, needle):
    return next(i + 1 for i, t in enumerate((folder / name).read_text().split("\n")) if needle in t)


def test_check_eager_kernels_with_their_annotated_shapes(styled):
    rc, out, err = tilelang("check", "eager.py", cwd=styled)
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines[-1] == "eager.py: 3 of 3 kernel(s) compiled for 'cuda -arch=sm_80'; 0 error(s), 0 warning(s)"
    # sizes no comment gives are bound to the default, and the note says which
    sa = _line_of(styled, "eager.py", "def scale_add")
    assert f"eager.py:{sa}:1: note: 'scale_add' is checked with M=N=1024 (T.const); give other sizes in a " \
           "`# tilelang: args=M=...` comment" in lines
    # the comment gives the blocks and M; N and K take the default
    gm = _line_of(styled, "eager.py", "def gemm")
    assert f"eager.py:{gm}:1: note: 'gemm' is checked with N=K=1024 (T.const); give other sizes in a " \
           "`# tilelang: args=N=...` comment" in lines
    # a parameter without a default and no comment: skipped with a note, not silently
    nb = _line_of(styled, "eager.py", "def needs_blocks")
    assert f"eager.py:{nb}:1: note: eager @tilelang.jit function 'needs_blocks' is not compiled: its " \
           "parameter(s) block_M, block_N have no default; give them in a `# tilelang: args=...` comment on the " \
           "decorator line" in lines
    assert not any("rows_scaled" in t for t in lines[:-1])  # T.dynamic: nothing to bind, no note


def test_info_on_an_eager_kernel_shows_the_specialised_shapes(styled):
    rc, out, err = tilelang("info", "eager.py::gemm", cwd=styled)
    assert rc == 0, out + err
    assert out.startswith("kernel 'gemm' (eager.py:")
    assert re.search(r"^A_s\s+64x32\s+float16\s+2\s+8192\s+0$", out, re.M), out
    assert "\nlayouts:\n  C_f: mma_C(64x64, warps 2x2)\n" in out


def test_check_autotuned_factories_with_their_first_config(styled):
    rc, out, err = tilelang("check", "tuned.py", "--target", "cpu", cwd=styled)
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines[-1] == "tuned.py: 2 of 2 kernel(s) compiled for 'cpu'; 0 error(s), 0 warning(s)"
    mm = _line_of(styled, "tuned.py", "def matmul")
    assert f"tuned.py:{mm}:1: note: autotuned 'matmul' is checked with its first configuration (block_M=64, " \
           "block_N=64) of 4" in lines
    ao = _line_of(styled, "tuned.py", "def add_one")
    assert f"tuned.py:{ao}:1: note: autotuned 'add_one' is checked with its first configuration (block=64) of 2" \
        in lines
    nc = _line_of(styled, "tuned.py", "def no_configs")
    assert f"tuned.py:{nc}:1: note: autotuned 'no_configs' is not compiled: its configs are not a non-empty list " \
           "of dicts" in lines
    # the first config is the one compiled: its 64-row tiles of A
    rc, out, err = tilelang("info", "tuned.py::matmul", cwd=styled)
    assert rc == 0, out + err
    assert re.search(r"^A_s\s+64x32\s+float16", out, re.M), out


def test_target_options_typed_unquoted(styled):
    rc, out, err = tilelang("check", "eager.py", "--target", "cuda", "-arch=sm_90a", cwd=styled)
    assert rc == 0, out + err
    assert out.splitlines()[-1] == ("eager.py: 3 of 3 kernel(s) compiled for 'cuda -arch=sm_90a'; 0 error(s), "
                                    "0 warning(s)")
    from tilelang.cli import join_target_options

    assert join_target_options(["check", "--target", "cuda", "-arch", "sm_86", "f.py"]) == \
        ["check", "--target", "cuda -arch=sm_86", "f.py"]
    assert join_target_options(["info", "--target=cuda", "-arch=sm_90a", "f.py::k"]) == \
        ["info", "--target", "cuda -arch=sm_90a", "f.py::k"]
    assert join_target_options(["check", "f.py", "--target", "cpu", "--hints"]) == \
        ["check", "f.py", "--target", "cpu", "--hints"]
