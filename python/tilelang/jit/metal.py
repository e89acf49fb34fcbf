"""Metal helpers for machines without a Metal compiler: a syntax and type check of generated Metal Shading
Language with clang in C++ mode, against our declarations of the MSL builtins the code generator uses
(``include/tl_device/metal_check/msl_check.h``, shipped with the package). See docs/metal.md."""
import os
import shutil
import subprocess
import tempfile

from ..errors import TileLangUnsupportedError
from .headers import include_dir


def check_dir():
    """The folder of msl_check.h and its <metal_stdlib> shim."""
    return os.path.join(include_dir(), "tl_device", "metal_check")


def clang():
    """The clang++ that runs the check (``TILELANG_CLANG`` overrides)."""
    for c in (os.environ.get("TILELANG_CLANG"), "clang++", "clang++-14"):
        if c and shutil.which(c):
            return shutil.which(c)
    raise TileLangUnsupportedError("the MSL check needs clang++ (install clang, or set TILELANG_CLANG)")


def check_source(source):
    """Checks MSL source with ``clang++ -fsyntax-only -std=c++17 -Werror=unknown-attributes`` (``-std=c++20`` for
    Metal 4 sources: mpp_check.h); returns
    ``(ok, diagnostics)``."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernel.metal")
        with open(path, "w") as f:
            f.write(source)
        # Metal 4's tensor operations take a class-type template argument (the matmul2d descriptor): C++20
        std = "c++20" if "MetalPerformancePrimitives" in source else "c++17"
        r = subprocess.run([clang(), "-fsyntax-only", "-std=" + std, "-x", "c++", "-Werror=unknown-attributes", "-I",
                            check_dir(), path], capture_output=True, text=True)
    return r.returncode == 0, r.stderr
