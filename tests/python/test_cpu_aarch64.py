"""The CPU target's generated C++ on AArch64: kernels generated for `cpu -mcpu=armv8-a` are
cross-compiled with Debian's aarch64-linux-gnu-g++ (the flags the CPU backend uses, OpenMP
included) into a small executable that qemu-aarch64 runs, and their results are compared with
NumPy in float64 (exactly for int8). This runs the portable micro-kernels, the tile caches, packed
B tiles and the vectorised reductions as an ARM machine would. scripts/setup.sh installs both tools.

On an x86 host such a target cannot be built by the CPU backend (it uses the host compiler): that
is a clear error, checked here too.
"""
import os
import shutil
import subprocess
import tempfile
import zlib

import ml_dtypes
import numpy as np
import pytest

import kernels as K
import tilelang
from tilelang import _ffi
from tilelang.errors import TileLangUnsupportedError

CXX = shutil.which("aarch64-linux-gnu-g++")
QEMU = shutil.which("qemu-aarch64")
SYSROOT = "/usr/aarch64-linux-gnu"
TARGET = "cpu -mcpu=armv8-a"
INCLUDE = os.path.join(os.path.dirname(tilelang.__file__), "include")
if not os.path.isdir(os.path.join(INCLUDE, "tl_device")):
    INCLUDE = os.path.join(os.path.dirname(__file__), "..", "..", "include")
IS_X86 = "sse4.2" in tilelang.Target("cpu").features or "avx" in tilelang.Target("cpu").features

# Reads each argument buffer (sizes in bytes on the command line) from one file, calls the kernel
# and writes the buffers back.
HARNESS = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
extern "C" int tl_entry(void** args, const int64_t* syms, char* err, int errlen);
int main(int argc, char** argv) {
  if (argc < 4) return 3;
  FILE* in = std::fopen(argv[1], "rb");
  if (!in) return 3;
  std::vector<void*> bufs;
  std::vector<size_t> sizes;
  for (int i = 3; i < argc; ++i) {
    const size_t n = std::strtoull(argv[i], nullptr, 10);
    void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p || std::fread(p, 1, n, in) != n) return 3;
    bufs.push_back(p);
    sizes.push_back(n);
  }
  std::fclose(in);
  char err[1024] = {0};
  const int64_t syms[16] = {0};
  if (tl_entry(bufs.data(), syms, err, int(sizeof err)) != 0) {
    std::fprintf(stderr, "kernel error: %s\n", err);
    return 2;
  }
  FILE* out = std::fopen(argv[2], "wb");
  for (size_t i = 0; i < bufs.size(); ++i) std::fwrite(bufs[i], 1, sizes[i], out);
  std::fclose(out);
  return 0;
}
"""


def _seed(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def test_cross_tools_present():
    assert CXX and QEMU, "scripts/setup.sh installs g++-aarch64-linux-gnu and qemu-user"


def _run_on_aarch64(func, arrays):
    """Generates the kernel for armv8-a, builds it for AArch64 and runs it under qemu on `arrays`
    (in parameter order); returns the arrays after the call."""
    assert CXX and QEMU, "scripts/setup.sh installs g++-aarch64-linux-gnu and qemu-user"
    src = _ffi.codegen(func, TARGET)
    assert "#define TL_CPU_ISA 1" in src, "an ARM target gets the portable micro-kernels"
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "kernel.cc"), "w") as f:
            f.write(src)
        with open(os.path.join(d, "harness.cc"), "w") as f:
            f.write(HARNESS)
        exe = os.path.join(d, "kernel")
        # The backend's flags (src/target/cpu/backend.cc) with the cross compiler's default -march.
        cmd = [CXX, "-O3", "-fno-trapping-math", "-fno-tree-loop-distribute-patterns", "-std=c++17", "-fopenmp",
               "-Wall", "-I", INCLUDE, "kernel.cc", "harness.cc", "-o", exe]
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "warning" not in r.stderr, r.stderr[-3000:]
        file_out = subprocess.run(["file", exe], capture_output=True, text=True).stdout if shutil.which("file") else ""
        assert not file_out or "aarch64" in file_out.lower() or "arm" in file_out.lower(), file_out
        data = os.path.join(d, "in.bin")
        with open(data, "wb") as f:
            for a in arrays:
                f.write(np.ascontiguousarray(a).tobytes())
        out = os.path.join(d, "out.bin")
        env = dict(os.environ, OMP_NUM_THREADS="2", QEMU_LD_PREFIX=SYSROOT)
        r = subprocess.run([QEMU, "-L", SYSROOT, exe, data, out] + [str(a.nbytes) for a in arrays],
                           capture_output=True, text=True, timeout=600, env=env)
        assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
        raw = open(out, "rb").read()
    res, off = [], 0
    for a in arrays:
        res.append(np.frombuffer(raw[off:off + a.nbytes], dtype=a.dtype).reshape(a.shape))
        off += a.nbytes
    return res


NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int8": np.int8}


@pytest.mark.parametrize("dtype,tA,tB", [("float32", False, False), ("float32", True, True),
                                         ("float16", False, True), ("bfloat16", True, False),
                                         ("int8", False, False)])
def test_gemm_on_aarch64(dtype, tA, tB):
    M, N, Kd = 133, 101, 75  # ragged against the 64x48x32 tiles and the 6x16 register block
    acc = "int32" if dtype == "int8" else "float32"
    func = K.matmul_transposed(M, N, Kd, 64, 48, 32, trans_A=tA, trans_B=tB, dtype=dtype, accum_dtype=acc,
                               out_dtype=acc)
    rng = _seed("aarch64", dtype, tA, tB)
    if dtype == "int8":
        A = rng.integers(-128, 128, (Kd, M) if tA else (M, Kd), dtype=np.int8)
        B = rng.integers(-128, 128, (N, Kd) if tB else (Kd, N), dtype=np.int8)
        C = np.full((M, N), 12345, np.int32)
    else:
        A = rng.standard_normal((Kd, M) if tA else (M, Kd)).astype(NP[dtype])
        B = rng.standard_normal((N, Kd) if tB else (Kd, N)).astype(NP[dtype])
        C = np.full((M, N), np.nan, np.float32)
    _, _, C = _run_on_aarch64(func, [A, B, C])
    if dtype == "int8":
        a, b = A.astype(np.int64), B.astype(np.int64)
        np.testing.assert_array_equal(C.astype(np.int64), (a.T if tA else a) @ (b.T if tB else b))
    else:
        a, b = A.astype(np.float64), B.astype(np.float64)
        ref = (a.T if tA else a) @ (b.T if tB else b)
        np.testing.assert_allclose(C.astype(np.float64), ref, rtol=1e-5, atol=1e-4 * np.sqrt(Kd))


def test_softmax_and_rmsnorm_on_aarch64():
    M, N = 37, 300
    rng = _seed("aarch64-rows", M, N)
    X = (rng.standard_normal((M, N)) * 4).astype(np.float32)
    _, Y = _run_on_aarch64(K.softmax(M, N, 8), [X, np.full((M, N), np.nan, np.float32)])
    x = X.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(Y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    _, Z = _run_on_aarch64(K.rms_norm(M, N, 8), [X, np.full((M, N), np.nan, np.float32)])
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(Z, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not IS_X86, reason="an x86 host")
def test_arm_target_is_a_clear_error_on_x86():
    func = K.matmul_transposed(64, 64, 64, 64, 48, 32, dtype="float32", out_dtype="float32")
    with pytest.raises(TileLangUnsupportedError, match="is for arm processors, but the CPU backend builds kernels "
                                                       "with this host's compiler, for x86"):
        tilelang.compile(func, target=TARGET)
    # The generated C++ itself is available and portable (built above for AArch64).
    assert "#define TL_CPU_ISA 1" in _ffi.codegen(func, TARGET)
