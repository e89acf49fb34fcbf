"""Symbolic sizes: T.dynamic / T.symbolic."""
from .. import _ffi
from ..errors import TileLangSyntaxError
from . import builder
from .dtypes import dtype_str


def dynamic(name, dtype="int32"):
    """A symbolic size, bound when the kernel is called: T.dynamic("m"). It is made outside the
    @T.prim_func (module level, a factory) and used in a parameter's shape, which a call binds; one made
    inside the body would be bound by nothing."""
    ctx = builder.current()
    if ctx is not None and ctx.in_prim_func_body:
        raise TileLangSyntaxError(
            f"T.dynamic({name!r}) inside a @T.prim_func body: nothing binds a size made here. Create it outside "
            f"the function (`{name} = T.dynamic({name!r})` at module level or in the factory) and use it in a "
            "parameter's shape, e.g. `A: T.Tensor((" + str(name) + ", 64), T.float32)`")
    if isinstance(name, str) and "," in name:
        # T.dynamic("batch, seq_len, seq_len_kv"): one size per name, as a tuple
        names = [n.strip() for n in name.split(",")]
        if not all(n.isidentifier() for n in names):
            raise TileLangSyntaxError(f"T.dynamic({name!r}): each comma-separated name must be an identifier")
        return tuple(_ffi.var(n, dtype_str(dtype)) for n in names)
    return _ffi.var(name, dtype_str(dtype))


symbolic = dynamic
