"""tvm.ir: structural equality of this project's IR (tvm.ir.structural_equal / assert_structural_equal)."""
from .. import _ffi
from ._names import unsupported_attr


def structural_equal(a, b, map_free_vars=False):
    return _ffi.structural_equal(a, b) if isinstance(a, _ffi.PrimFunc) else _ffi.structural_equal_expr(a, b)


def assert_structural_equal(a, b, map_free_vars=False):
    if not structural_equal(a, b):
        pa = _ffi.print_func(a) if isinstance(a, _ffi.PrimFunc) else str(a)
        pb = _ffi.print_func(b) if isinstance(b, _ffi.PrimFunc) else str(b)
        raise AssertionError(f"the two are not structurally equal:\n{pa}\n---\n{pb}")


def __getattr__(name):
    raise unsupported_attr("tvm.ir", name)
