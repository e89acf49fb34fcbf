#!/usr/bin/env bash
# The PyTorch phase of the tests: kernels called with torch tensors (tests/python/with_torch).
#
# torch is not a dependency of the package and is not in .venv, so the rest of the suite keeps testing
# the torch-free path. This script installs PyPI's torch wheel (with its CUDA libraries: PyPI has no
# CPU-only build for x86-64 Linux; about 3 GB to download, 5.4 GB on disk, under a minute on a fast link)
# into build/torch-site once, and runs the torch tests with it on the path. TL_REQUIRE_TORCH=1 makes a
# torch that cannot be imported a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
SITE="$PWD/build/torch-site"
if ! PYTHONPATH="$SITE" python -c "import torch" 2>/dev/null; then
  echo "test_torch.sh: installing torch from PyPI into build/torch-site (about 3 GB, once)"
  rm -rf "$SITE"
  python -m pip install -q --disable-pip-version-check --target "$SITE" "torch>=2.4"
  # torch's own requirements that the environment already has stay the environment's (numpy, pytest's
  # dependencies): only torch and what it alone needs come from build/torch-site.
  rm -rf "$SITE"/numpy "$SITE"/numpy-* "$SITE"/bin
fi
PYTHONPATH="$SITE" python -c "import torch; print('test_torch.sh: torch', torch.__version__)"
export TL_REQUIRE_TORCH=1
export TILELANG_TEST_CACHE_DIR="${TILELANG_TEST_CACHE_DIR:-$PWD/build/kernel-cache}"
PYTHONPATH="$SITE" python -m pytest tests/python/with_torch -q -n 2 -p no:cacheprovider "$@"
