#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and PyTorch: build, check every CUDA kernel against torch, time the
# reference GEMM and a 4096^3 fp16 GEMM against cuBLAS. Prints one short table.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv --system-site-packages .venv   # reuse the machine's PyTorch
fi
. .venv/bin/activate
python -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || {
  echo "gpu_check: needs PyTorch with a visible CUDA GPU" >&2; exit 2; }
pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy ml_dtypes ninja 2>/dev/null || true
pip install -q --no-build-isolation -e . >/dev/null
export TILELANG_CACHE_DIR="${TILELANG_CACHE_DIR:-$PWD/build/kernel-cache}"
# The product's reference program, exactly as written (target "cuda", torch tensors on the GPU).
if [ -f ../shared/examples/gemm_tilelang_demo.py ]; then
  python ../shared/examples/gemm_tilelang_demo.py
fi
python scripts/gpu_check.py
