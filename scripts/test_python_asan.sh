#!/usr/bin/env bash
# The Python extension under AddressSanitizer and UndefinedBehaviorSanitizer (fatal): builds the core
# and the nanobind module with the sanitizers into build/py-asan, stages them with the Python package,
# and runs the tests that drive the C++ hardest (the parser and IR builders, every pass, the code
# generators, the emulator, the must-fail programs and the fuzzers) in an interpreter that preloads the
# sanitizer runtimes. Leak checking is off for the test run (CPython itself keeps objects alive at exit);
# a separate workload (tests/leaks/extension_leaks.py) then runs under LeakSanitizer and fails on any
# leak whose allocation stack passes through TileLang-C++, or on nanobind objects alive at exit
# (TL_CHECK_EXTENSION_LEAKS=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$PWD/.venv/bin/python"
cmake -S . -B build/py-asan -G Ninja -DTL_BUILD_PYTHON=ON -DTL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined" -DPython_EXECUTABLE="$PY" >/dev/null
cmake --build build/py-asan -j2
stage="$PWD/build/py-asan/stage"
rm -rf "$stage"
mkdir -p "$stage/tilelang/lib"
cp -r python/tilelang/. "$stage/tilelang/"
cp build/py-asan/_ffi*.so "$stage/tilelang/"
cp build/py-asan/libtilelang_core.so "$stage/tilelang/lib/"
ln -s "$PWD/include" "$stage/tilelang/include"
site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# -S: no site hooks, so the editable install's finder cannot hand out the unsanitised module.
export PYTHONPATH="$stage:$site"
export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:detect_odr_violation=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TILELANG_CACHE_DIR="${TILELANG_CACHE_DIR:-$PWD/build/kernel-cache-asan}"
"$PY" -S -c 'import tilelang, sys; f = tilelang._ffi.__file__; sys.exit(0 if "/py-asan/" in f else f"not the sanitised module: {f}")'
"$PY" -S -m pytest -q -p no:cacheprovider tests/python/transform tests/python/test_frontend.py \
  tests/python/test_errors.py tests/python/test_regressions_fuzz.py tests/python/test_fuzz.py \
  tests/python/test_compile_entry.py tests/python/test_scalar_fragments.py "$@"
# Leaks: LSan writes its report to files; only leaks allocated through our code count.
if [ "${TL_CHECK_EXTENSION_LEAKS:-1}" = 1 ]; then
  rm -f build/py-asan/lsan.*
  LSAN_REPORT_PREFIX="$PWD/build/py-asan/lsan" "$PY" -S tests/leaks/extension_leaks.py
fi
