"""tilelang.compile and the @tilelang.jit factory decorator."""
import functools

from .. import _ffi
from ..errors import TileLangTypeError
from .compiler import _MEMO, _check_jit_options, _freeze, clear_compile_memo, compile  # noqa: F401,A004
from .kernel import JITKernel  # noqa: F401
from .target import Target  # noqa: F401


def jit(func=None, *, out_idx=None, target=None, execution_backend=None, pass_configs=None, verbose=False,
        **kwargs):
    """@tilelang.jit on a factory returning a @T.prim_func: calling the factory compiles, once per
    distinct set of arguments. On a function whose body is the kernel (TileLang's eager style: tensor
    annotations, T.const sizes, T.empty outputs), calling it compiles once per signature and runs it
    (see jit/eager.py). With no target, each compile takes $TILELANG_DEFAULT_TARGET (else "auto"), with no
    execution_backend $TILELANG_EXECUTION_BACKEND, as TileLang's."""
    _check_jit_options(kwargs)

    def decorate(factory):
        from .eager import EagerJIT, is_eager_style

        if isinstance(factory, _ffi.PrimFunc):
            # @tilelang.jit on a @T.prim_func (TileLang accepts it): calling it with no arguments gives the kernel
            return _jit_prim_func(factory, out_idx=out_idx, target=target, execution_backend=execution_backend,
                                  pass_configs=pass_configs, verbose=verbose)
        if is_eager_style(factory):
            if out_idx is not None:
                raise TileLangTypeError(f"@tilelang.jit(out_idx=...) is for a factory returning a @T.prim_func; "
                                        f"'{factory.__name__}' is an eager kernel: declare its outputs with "
                                        "T.empty(shape, dtype) and return them")
            return EagerJIT(factory, target=target, execution_backend=execution_backend,
                            pass_configs=pass_configs, verbose=verbose)
        cache = {}

        @functools.wraps(factory)
        def wrapper(*args, **kw):
            key = (_freeze(args), _freeze(kw))
            if key not in cache:
                prim = factory(*args, **kw)
                cache[key] = compile(prim, out_idx=out_idx, target=target, execution_backend=execution_backend,
                                     pass_configs=pass_configs, verbose=verbose)
            return cache[key]

        def par_compile(configs, num_workers=None, ignore_error=False):
            """One kernel per configuration (a tuple of positional arguments or a dict of keyword ones), built
            in parallel threads; the kernels in order, and in the call cache."""
            from .parallel import compile_in_parallel

            def elaborate(cfg):
                args, kw = (cfg, {}) if isinstance(cfg, tuple) else ((), dict(cfg))
                return (_freeze(args), _freeze(kw)), factory(*args, **kw)

            def build(item):
                key, prim = item
                if key not in cache:
                    cache[key] = compile(prim, out_idx=out_idx, target=target, execution_backend=execution_backend,
                                         pass_configs=pass_configs, verbose=verbose)
                return cache[key]

            return compile_in_parallel(list(configs), elaborate, build, num_workers, ignore_error, factory.__name__)

        def parse_cache_key(*args, **kw):
            """The key a call with these arguments is cached under (TileLang's method)."""
            return (_freeze(args), _freeze(kw))

        wrapper.cache = cache
        wrapper.compile = wrapper  # TileLang's f.compile(*args, **kwargs): the kernel for these arguments
        wrapper.par_compile = par_compile
        wrapper.parse_cache_key = parse_cache_key
        # what @tilelang.autotune (stacked above) needs to know: the target is part of its cache key
        wrapper.jit_options = {"out_idx": out_idx, "target": target, "execution_backend": execution_backend,
                               "pass_configs": pass_configs}
        return wrapper

    return decorate(func) if func is not None else decorate


def _jit_prim_func(func, **options):
    cache = {}

    def wrapper(*args, **kwargs):
        if args or kwargs:
            from ..errors import TileLangArgumentError

            raise TileLangArgumentError(f"tilelang.jit({func.name}) wraps a @T.prim_func: call it with no arguments to "
                                        "get the kernel, then call the kernel with the tensors")
        if "kernel" not in cache:
            cache["kernel"] = compile(func, **options)
        return cache["kernel"]

    wrapper.__name__ = wrapper.__qualname__ = func.name
    wrapper.cache = cache
    wrapper.jit_options = {k: options.get(k) for k in ("out_idx", "target", "execution_backend", "pass_configs")}
    return wrapper
