"""Ascend helpers for machines without CANN: a syntax and type check of generated AscendC C++ with clang,
against our declarations of the public AscendC API the code generator uses
(``include/tl_device/ascend_check/kernel_operator.h``) and the helpers shipped with the generated code
(``include/tl_device/ascend/tl_ascend.h``). See docs/ascend.md."""
import os
import subprocess
import tempfile

from .headers import include_dir
from .metal import clang


def check_dirs():
    """The folders the check puts on the include path: our declarations first, then the shipped helpers."""
    base = os.path.join(include_dir(), "tl_device")
    return [os.path.join(base, "ascend_check"), os.path.join(base, "ascend")]


def check_source(source):
    """Checks AscendC source with ``clang++ -fsyntax-only -std=c++17 -Wall -Werror``; returns ``(ok, diagnostics)``."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernel.cpp")
        with open(path, "w") as f:
            f.write(source)
        cmd = [clang(), "-fsyntax-only", "-std=c++17", "-Wall", "-Werror", "-Wno-unused-variable"]
        for inc in check_dirs():
            cmd += ["-I", inc]
        r = subprocess.run(cmd + [path], capture_output=True, text=True)
    return r.returncode == 0, r.stderr
