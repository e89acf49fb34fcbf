"""``T.Ref``: a macro parameter through which the macro writes the caller's ``T.alloc_var`` variable."""
import inspect

from .. import _ffi
from ..errors import TileLangArgumentError, TileLangTypeError


class Ref:
    """``x: T.Ref`` on a macro parameter: the caller passes a ``T.alloc_var`` variable and the macro reads and
    writes that variable (``x = v`` in the macro stores into it). Passing anything else is an error at the
    call (a TileLangArgumentError, which is a ValueError, as in TileLang)."""

    def __init__(self):
        raise TileLangTypeError("T.Ref is an annotation (`def m(x: T.Ref): ...`), not a value")


_SPELLINGS = ("T.Ref", "Ref", "T.Var")  # string annotations (from __future__ import annotations); T.Var: TileLang's older name


def ref_call_arguments(macro, node):
    """Which arguments of a call of ``macro`` are T.Ref parameters: ({position: name}, {keyword names})."""
    anns = getattr(macro.fn, "__annotations__", {}) or {}
    names = {n for n, a in anns.items() if a is Ref or (isinstance(a, str) and a in _SPELLINGS)}
    if not names:
        return {}, set()
    params = list(inspect.signature(macro.fn).parameters)
    pos = {i: params[i] for i in range(min(len(node.args), len(params))) if params[i] in names}
    return pos, {k.arg for k in node.keywords if k.arg in names}


def check_ref_argument(macro, name, value):
    """A T.Ref parameter's argument must be a T.alloc_var buffer."""
    if isinstance(value, _ffi.Buffer) and value.scope == "local.var":
        return
    if isinstance(value, _ffi.Buffer):
        what = f"the {value.scope} buffer '{value.name}'"
    elif isinstance(value, _ffi.Expr):
        what = "an expression"
    else:
        what = f"the Python value {value!r}"
    raise TileLangArgumentError(f"parameter '{name}' of macro '{macro.__name__}' is a T.Ref: pass a variable made with "
                                f"T.alloc_var(...) (the macro writes through it), not {what}")
