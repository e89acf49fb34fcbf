#!/usr/bin/env bash
# Runs every test: the GoogleTest suite (through ctest, also under ASan/UBSan), pytest, and the
# C++-heavy part of pytest again against the extension built with ASan/UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
cmake -S . -B build/cpp -G Ninja -DTL_BUILD_PYTHON=OFF -DTL_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/cpp -j2
ctest --test-dir build/cpp --output-on-failure -j2
# Sanitizers: undefined behaviour is fatal (no recovery), leaks are reported and fail the test.
cmake -S . -B build/cpp-asan -G Ninja -DTL_BUILD_PYTHON=OFF -DTL_BUILD_TESTS=ON -DTL_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined" >/dev/null
cmake --build build/cpp-asan -j2
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build/cpp-asan --output-on-failure -j2
export TILELANG_CACHE_DIR="${TILELANG_CACHE_DIR:-$PWD/build/kernel-cache}"
python -m pytest tests/python -q
# The Python extension itself under the sanitizers (scripts/test_python_asan.sh).
bash scripts/test_python_asan.sh
