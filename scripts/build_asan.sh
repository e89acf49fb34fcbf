#!/usr/bin/env bash
# One build tree with AddressSanitizer and UndefinedBehaviorSanitizer (undefined behaviour fatal, no
# recovery): the core library, the GoogleTest suite and the nanobind extension, all from one compile of
# the core, into build/asan. scripts/test.sh runs ctest in it; scripts/test_python_asan.sh stages its
# extension. Incremental: a second call rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/asan -G Ninja -DTL_BUILD_PYTHON=ON -DTL_BUILD_TESTS=ON -DTL_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined" \
  -DPython_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
cmake --build build/asan -j"${TL_BUILD_JOBS:-2}"
