#!/usr/bin/env bash
# The PyTorch phase of the tests: kernels called with torch tensors (tests/python/with_torch).
#
# torch is not a dependency of the package and is not in .venv, so the rest of the suite keeps testing
# the torch-free path. This script installs PyPI's torch wheel (with its CUDA libraries: PyPI has no
# CPU-only build for x86-64 Linux) under build/torch-site once, and runs the torch tests with it on the
# path. TL_REQUIRE_TORCH=1 makes a torch that cannot be imported a failure, never a skip.
#
# Disk: a plain `pip install torch` holds every wheel (about 3 GB) and the unpacked tree (about 5.4 GB)
# at once, and a CI machine ran out of space there. So pip resolves first (metadata only), then each
# package is installed alone with no pip cache: the peak is the installed tree (about 4.2 GB) plus one
# wheel. triton (1 GB) and numpy stay the environment's (scripts/setup.sh installs both; import torch
# needs neither triton nor torch.compile here).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
PREFIX="$PWD/build/torch-site"
SITE="$PREFIX/lib/python$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages"
if ! PYTHONPATH="$SITE" python -c "import torch" 2>/dev/null; then
  echo "test_torch.sh: installing torch from PyPI into build/torch-site (about 4.2 GB on disk, once)"
  echo "test_torch.sh: free disk space before: $(df -h --output=avail build | tail -1 | tr -d ' ')"
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  python -m pip install -q --disable-pip-version-check --dry-run --ignore-installed --no-cache-dir \
    --prefix "$PREFIX" --report "$PREFIX/resolved.json" "torch>=2.4"
  python - "$PREFIX/resolved.json" > "$PREFIX/requirements.txt" <<'PY'
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    name = item["metadata"]["name"]
    if name.lower() not in ("triton", "numpy"):
        print(f"{name}=={item['metadata']['version']}")
PY
  while read -r req; do
    python -m pip install -q --disable-pip-version-check --no-deps --ignore-installed --no-cache-dir \
      --no-warn-script-location --prefix "$PREFIX" "$req"
  done < "$PREFIX/requirements.txt"
  echo "test_torch.sh: free disk space after: $(df -h --output=avail build | tail -1 | tr -d ' ')"
fi
PYTHONPATH="$SITE" python -c "import torch; print('test_torch.sh: torch', torch.__version__)"
export TL_REQUIRE_TORCH=1
export TILELANG_TEST_CACHE_DIR="${TILELANG_TEST_CACHE_DIR:-$PWD/build/kernel-cache}"
PYTHONPATH="$SITE" python -m pytest tests/python/with_torch -q -n 2 -p no:cacheprovider "$@"
