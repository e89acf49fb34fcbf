#!/usr/bin/env bash
# The GPU gate, in one call, on a machine with an NVIDIA GPU and PyTorch and NO network: builds the
# project offline with what that machine has (python3 with scikit-build-core, nanobind, cmake, ninja,
# numpy, ml_dtypes, torch; nvcc), then scripts/gpu_check.py runs everything (the reference program as
# written, every CUDA kernel against torch, per-intrinsic micro-tests on the GPU and in the emulator
# compared bit for bit, compute-sanitizer memcheck/racecheck, timings against cuBLAS and SDPA), prints
# one table, writes it as JSON ($OUT/gpu_check.json when OUT is set, else build/gpu_check.json), and
# exits non-zero on any mismatch, error or sanitizer report.
#   bash scripts/gpu_check.sh                 build + check (needs a GPU)
#   bash scripts/gpu_check.sh --build-only    the offline build alone (tests/python/test_gpu_check.py)
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
SITE="${TL_GPU_SITE:-$PWD/build/gpu-site}"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_BUILD_ISOLATION=1
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
t0=$(date +%s)
rm -rf "$SITE"
if ! "$PY" -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" . ; then
  echo "gpu_check: the offline build failed (no network is used: the build needs scikit-build-core, nanobind," \
       "cmake and ninja installed for $PY)" >&2
  exit 3
fi
echo "gpu_check: built offline into $SITE in $(( $(date +%s) - t0 )) s"
[ "${1:-}" = "--build-only" ] && exit 0
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export TILELANG_CACHE_DIR="${TILELANG_CACHE_DIR:-$PWD/build/gpu-kernel-cache}"
exec "$PY" scripts/gpu_check.py
