#!/usr/bin/env bash
# The Python extension under AddressSanitizer and UndefinedBehaviorSanitizer (fatal): builds the core
# and the nanobind module with the sanitizers into build/asan (scripts/build_asan.sh, shared with the
# sanitised GoogleTest run), stages them with the Python package,
# and runs the tests that drive the C++ hardest (the parser and IR builders, every pass, the code
# generators, the emulator, the must-fail programs and the fuzzers) in an interpreter that preloads the
# sanitizer runtimes. Leak checking is off for the test run (CPython itself keeps objects alive at exit);
# a separate workload (tests/leaks/extension_leaks.py) then runs under LeakSanitizer and fails on any
# leak whose allocation stack passes through TileLang-C++, or on nanobind objects alive at exit
# (TL_CHECK_EXTENSION_LEAKS=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$PWD/.venv/bin/python"
bash scripts/build_asan.sh
stage="$PWD/build/asan/stage"
rm -rf "$stage"
mkdir -p "$stage/tilelang/lib"
cp -r python/tilelang/. "$stage/tilelang/"
cp build/asan/_ffi*.so "$stage/tilelang/"
cp build/asan/libtilelang_core.so "$stage/tilelang/lib/"
ln -s "$PWD/include" "$stage/tilelang/include"
site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# -S: no site hooks, so the editable install's finder cannot hand out the unsanitised module.
export PYTHONPATH="$stage:$site"
export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:detect_odr_violation=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The kernel cache of the plain pytest run (scripts/test.sh): content-addressed, so the host compiler
# runs only for kernels that run did not build.
export TILELANG_TEST_CACHE_DIR="${TILELANG_TEST_CACHE_DIR:-$PWD/build/kernel-cache}"
# Two pytest-xdist workers, each started through a wrapper that passes -S too; every worker checks that
# it imported the sanitised module (tests/python/conftest.py: TL_EXPECT_FFI_IN).
export TL_EXPECT_FFI_IN="/build/asan/stage/"
printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$PY" > build/asan/python-S
chmod +x build/asan/python-S
"$PY" -S -c 'import tilelang, sys; f = tilelang._ffi.__file__; sys.exit(0 if "/asan/stage/" in f else f"not the sanitised module: {f}")'
"$PY" -S -m pytest -q -p no:cacheprovider --dist load --tx "2*popen//python=$PWD/build/asan/python-S" tests/python/transform tests/python/test_frontend.py \
  tests/python/test_errors.py tests/python/test_regressions_fuzz.py tests/python/test_fuzz.py \
  tests/python/test_compile_entry.py tests/python/test_scalar_fragments.py tests/python/test_ptx_emulator.py \
  tests/python/test_ascend.py tests/python/test_clusters.py "$@"
# Leaks: LSan writes its report to files; only leaks allocated through our code count.
if [ "${TL_CHECK_EXTENSION_LEAKS:-1}" = 1 ]; then
  rm -f build/asan/lsan.*
  LSAN_REPORT_PREFIX="$PWD/build/asan/lsan" "$PY" -S tests/leaks/extension_leaks.py
fi
