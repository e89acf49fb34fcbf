"""TileLang-C++: a tile-level kernel compiler with TileLang's Python DSL as its front end."""
import os as _os
import sys as _sys

from . import _ffi  # noqa: F401  (the C++ core)
from .log import logger, set_log_level  # noqa: F401
from . import errors  # noqa: F401
from . import language  # noqa: F401
from .errors import TileLangError  # noqa: F401

from ._version import __version__  # noqa: E402,F401


def _find_zig():
    """gfx950 is built by the clang inside the PyPI package `ziglang` (src/target/hip/hipcc.cc): its zig
    executable goes to the C++ core as $TL_ZIG (found without importing the package)."""
    if _os.environ.get("TL_ZIG"):
        return
    import importlib.util
    try:
        spec = importlib.util.find_spec("ziglang")
    except (ImportError, ValueError):
        return
    for d in (spec.submodule_search_locations or []) if spec else []:
        z = _os.path.join(d, "zig")
        if _os.access(z, _os.X_OK):
            _os.environ["TL_ZIG"] = z
            return


_find_zig()


def script(func):
    """The DSL text of a PrimFunc (the printer's output)."""
    return _ffi.print_func(func)


def disable_cache():
    """Compile without the disk cache from now on in this process (TILELANG_DISABLE_CACHE=1)."""
    _os.environ["TILELANG_DISABLE_CACHE"] = "1"


def enable_cache():
    _os.environ.pop("TILELANG_DISABLE_CACHE", None)


def is_cache_enabled():
    return _os.environ.get("TILELANG_DISABLE_CACHE", "") in ("", "0")


def structural_equal(a, b):
    return _ffi.structural_equal(a, b)


def structural_hash(a):
    return _ffi.structural_hash(a)

from .jit import compile, jit  # noqa: E402,F401,A001
from .jit.parallel import par_compile  # noqa: E402,F401
from .jit.target import Target  # noqa: E402,F401
from .jit.kernel import JITKernel  # noqa: E402,F401
from .profiler import TensorSupplyType  # noqa: E402,F401
from . import tools  # noqa: E402,F401
from .autotuner import autotune  # noqa: E402,F401
from . import engine  # noqa: E402,F401
from .engine import lower  # noqa: E402,F401
from . import layout, math, testing, transform  # noqa: E402,F401
from .math import cdiv, next_power_of_2  # noqa: E402,F401
from .transform import PassConfigKey  # noqa: E402,F401
from . import tvm  # noqa: E402,F401  (TVM's names TileLang programs use; `import tvm` where none is installed)
from .tvm import DataType  # noqa: E402,F401  (`from tilelang import DataType`, as TileLang re-exports TVM's)
from .tvm import _alias as _tvm_alias  # noqa: E402

_tvm_alias.install()
