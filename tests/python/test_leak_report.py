"""The filter of the extension leak check (tests/leaks/extension_leaks.py): a leak counts when its
allocation stack passes through TileLang-C++; CPython's own allocations kept at exit do not."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "extension_leaks", os.path.join(os.path.dirname(__file__), "..", "leaks", "extension_leaks.py"))
leaks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(leaks)

REPORT = """=================================================================
==123==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 0x7f in malloc (/usr/lib/x86_64-linux-gnu/libasan.so.8+0xd9)
    #1 0x55 in PyObject_Malloc (/usr/bin/python3.11+0x1234)
    #2 0x55 in _PyEval_EvalFrameDefault (/usr/bin/python3.11+0x5678)

Direct leak of 48 byte(s) in 1 object(s) allocated from:
    #0 0x7f in operator new(unsigned long) (/usr/lib/x86_64-linux-gnu/libasan.so.8+0xdb)
    #1 0x7e in tl::MakeVar(std::string const&, tl::DataType) /work/src/ir/expr.cc:88
    #2 0x7e in nb_func_vectorcall (/work/build/py-asan/_ffi.cpython-311-x86_64-linux-gnu.so+0x99)
    #3 0x55 in _PyEval_EvalFrameDefault (/usr/bin/python3.11+0x5678)

Indirect leak of 16 byte(s) in 1 object(s) allocated from:
    #0 0x7f in malloc (/usr/lib/x86_64-linux-gnu/libasan.so.8+0xd9)
    #1 0x7e in std::vector<int> (/work/build/py-asan/stage/tilelang/lib/libtilelang_core.so+0x42)

Direct leak of 100 byte(s) in 1 object(s) allocated from:
    #0 0x7f in operator new[](unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:98
    #1 0x7e in operator() /work/src/python/bindings.cc:451
    #2 0x7e in operator() /venv/site-packages/nanobind/include/nanobind/nb_func.h:350
    #3 0x55 in PyObject_Vectorcall Objects/call.c:299

Direct leak of 32 byte(s) in 1 object(s) allocated from:
    #0 0x7f in operator new(unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:95
    #1 0x7e in nb_func_new /venv/site-packages/nanobind/src/nb_func.cpp:300
    #2 0x55 in PyObject_Vectorcall Objects/call.c:299

SUMMARY: AddressSanitizer: 128 byte(s) leaked in 3 allocation(s).
"""


def test_only_leaks_through_our_code_count():
    ours = leaks.check_report(REPORT, root="/work")
    assert len(ours) == 3
    assert "tl::MakeVar" in ours[0] and "libtilelang_core" in ours[1]
    # a binding's lambda is in no namespace: symbolised, only its source file says it is ours (the
    # sanitizer's own src/ and nanobind's files are not)
    assert "bindings.cc:451" in ours[2]
    assert not any("PyObject_Malloc" in b and "tl::" not in b for b in ours)


def test_a_clean_report_has_none():
    assert leaks.check_report("==1==ERROR: LeakSanitizer: detected memory leaks\n\nSUMMARY: nothing\n") == []
