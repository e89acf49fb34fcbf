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

SUMMARY: AddressSanitizer: 128 byte(s) leaked in 3 allocation(s).
"""


def test_only_leaks_through_our_code_count():
    ours = leaks.check_report(REPORT)
    assert len(ours) == 2
    assert "tl::MakeVar" in ours[0] and "libtilelang_core" in ours[1]
    assert not any("PyObject_Malloc" in b and "tl::" not in b for b in ours)


def test_a_clean_report_has_none():
    assert leaks.check_report("==1==ERROR: LeakSanitizer: detected memory leaks\n\nSUMMARY: nothing\n") == []
