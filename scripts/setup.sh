#!/usr/bin/env bash
# Installs system and Python dependencies into .venv and builds the package (editable): the development and
# CI setup, with every toolchain the tests use. A user who wants the package alone runs `pip install .`
# (extras: [cuda], [lsp], [plots], [ray], [dev]). Each step says what it does before it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "setup: $*"; }
step "checking the system packages (compilers, OpenCL, HIP, AArch64 cross tools)"
need=()
command -v g++ >/dev/null || need+=(g++)
command -v ninja >/dev/null || need+=(ninja-build)
command -v cmake >/dev/null || need+=(cmake)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
# OpenCL: the ICD loader and PoCL (OpenCL on this CPU), so the OpenCL backend's tests run for real.
ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 ' || need+=(ocl-icd-libopencl1)
ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 || need+=(pocl-opencl-icd)
# Metal: clang checks the generated Metal Shading Language (no Metal compiler on Linux; tests/python/test_metal.py).
command -v clang++ >/dev/null || command -v clang++-14 >/dev/null || need+=(clang)
# HIP: Debian's ROCm hipcc (clang with the AMDGPU target) compiles HIP kernels to gfx90a / gfx940 code
# objects without a GPU, so the HIP backend's tests build for real (about 20 s of apt on these machines).
command -v hipcc >/dev/null || need+=(hipcc)
# gfx942 (MI300) is newer than that hipcc: a newer clang with the AMDGPU target and its linker build it
# (src/target/hip/hipcc.cc; tests/python/test_hip_gfx942.py).
compgen -G '/usr/bin/clang++-1[7-9]' >/dev/null || compgen -G '/usr/bin/clang++-2[0-9]' >/dev/null || need+=(clang-19)
compgen -G '/usr/bin/ld.lld-1[7-9]' >/dev/null || compgen -G '/usr/bin/ld.lld-2[0-9]' >/dev/null || need+=(lld-19)
# AArch64: the CPU target's generated C++ is cross-compiled and run under qemu-user
# (tests/python/test_cpu_aarch64.py).
command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    step "apt-get install ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}";
  else echo "please install: ${need[*]}" >&2; exit 1; fi
fi
[ -d .venv ] || { step "creating the virtual environment .venv"; python3 -m venv .venv; }
. .venv/bin/activate
step "upgrading pip"
pip install -q --upgrade pip
step "installing the Python packages (build tools, numpy, pytest, tqdm, matplotlib, Ray, the LSP libraries)"
pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy ml_dtypes pytest pytest-xdist ninja tqdm matplotlib "ray>=2.9" \
  "pygls>=2.0" "lsprotocol>=2025.0" "pytest-lsp>=1.0" "pytest-asyncio>=0.23"
# cuobjdump + nvdisasm: the tests read the SASS of some kernels (tests/python/test_tf32_gemm.py)
step "installing cuobjdump and nvdisasm"
pip install -q nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
# ziglang bundles clang / LLVM 22, the compiler that builds AMD gfx950 (CDNA4) code objects without a GPU
step "installing ziglang (clang 22 for gfx950)"
pip install -q "ziglang>=0.15"
# Triton compiles PTX for NVIDIA targets without a GPU: the PTX emulator's tests run Triton's PTX
# (tests/python/test_ptx_triton.py; pinned: its compile API moves between minor versions); the package never
# imports it
step "installing Triton (PTX the PTX emulator is tested on)"
pip install -q "triton==3.9.*"
# NVRTC compiles CUDA kernels (no GPU needed); take it from PyPI when no CUDA toolkit provides it.
if ! ls /usr/local/cuda*/lib64/libnvrtc.so* ${CUDA_HOME:+$CUDA_HOME/lib64/libnvrtc.so*} >/dev/null 2>&1 \
    && ! ldconfig -p 2>/dev/null | grep -q libnvrtc; then
  step "installing NVRTC from PyPI (no CUDA toolkit found)"
  pip install -q "nvidia-cuda-nvrtc>=12"
fi
step "building and installing the package (editable, with the GoogleTest suite in the same tree, build/py; the C++ build takes a few minutes)"
pip install -q --no-build-isolation --config-settings=cmake.define.TL_BUILD_TESTS=ON -e .
step "done: . .venv/bin/activate, then python -m pytest tests/python"
