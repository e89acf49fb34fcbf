"""tilelang.compile and the @tilelang.jit factory decorator."""
import functools

from .. import _ffi
from ..errors import TileLangTypeError
from .kernel import JITKernel


def compile(func, out_idx=None, target=None, execution_backend=None, pass_configs=None, verbose=False,  # noqa: A001
            target_host=None):
    """Compiles a PrimFunc for a target and returns a callable kernel."""
    if not isinstance(func, _ffi.PrimFunc):
        raise TileLangTypeError(f"tilelang.compile expects a @T.prim_func, got {type(func).__name__}")
    return JITKernel(func, out_idx=out_idx, target=target or "auto", execution_backend=execution_backend,
                     pass_configs=pass_configs, verbose=verbose)


def _freeze(x):
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    return x


def jit(func=None, *, out_idx=None, target="auto", execution_backend=None, pass_configs=None, verbose=False,
        **kwargs):
    """@tilelang.jit on a factory returning a @T.prim_func: calling the factory compiles, once per
    distinct set of arguments."""

    def decorate(factory):
        cache = {}

        @functools.wraps(factory)
        def wrapper(*args, **kw):
            key = (_freeze(args), _freeze(kw))
            if key not in cache:
                prim = factory(*args, **kw)
                cache[key] = compile(prim, out_idx=out_idx, target=target, execution_backend=execution_backend,
                                     pass_configs=pass_configs, verbose=verbose)
            return cache[key]

        wrapper.cache = cache
        # what @tilelang.autotune (stacked above) needs to know: the target is part of its cache key
        wrapper.jit_options = {"out_idx": out_idx, "target": target, "execution_backend": execution_backend,
                               "pass_configs": pass_configs}
        return wrapper

    return decorate(func) if func is not None else decorate
