#!/usr/bin/env bash
# Runs every test: the GoogleTest suite (through ctest, also under ASan/UBSan), pytest, and the
# C++-heavy part of pytest again against the extension built with ASan/UBSan.
#
# The core is compiled twice, not four times: scripts/setup.sh builds the package and the GoogleTest
# suite in one tree (build/py), and scripts/build_asan.sh builds the sanitised core, tests and
# extension in another (build/asan). pytest runs on two workers (pytest-xdist), then the tests marked
# `serial` (timing-sensitive: the Ray autotuner and its compile timeouts) alone. Both pytest runs share
# one kernel cache (build/kernel-cache, content-addressed: tests/python/conftest.py), so the sanitised
# run reuses the host-compiler builds of the first instead of repeating them. The PyTorch tests run in
# their own phase (scripts/test_torch.sh) with torch installed beside the environment, so the main run
# keeps testing the torch-free path.
set -euo pipefail
cd "$(dirname "$0")/.."
phase() { echo "test.sh: $* (at ${SECONDS} s)"; }
phase "setup"
bash scripts/setup.sh
. .venv/bin/activate
phase "ctest (build/py)"
ctest --test-dir build/py --output-on-failure -j2
# Sanitizers: undefined behaviour is fatal (no recovery), leaks are reported and fail the test.
phase "building build/asan"
bash scripts/build_asan.sh
phase "ctest (build/asan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -j2
export TILELANG_TEST_CACHE_DIR="${TILELANG_TEST_CACHE_DIR:-$PWD/build/kernel-cache}"
phase "pytest on two workers"
python -m pytest tests/python -q -n 2 -m "not serial"
phase "pytest, the serial tests"
python -m pytest tests/python -q -m serial
phase "pytest, the PyTorch tests (torch from PyPI in build/torch-site)"
bash scripts/test_torch.sh
phase "pytest against the sanitised extension"
# The Python extension itself under the sanitizers (scripts/test_python_asan.sh).
bash scripts/test_python_asan.sh
phase "done"
