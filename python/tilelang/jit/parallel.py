"""par_compile: many kernels built at once. Elaborating (parsing a configuration into a PrimFunc) runs in
order in the calling thread; the builds (lowering, code generation and the toolchain, which release the GIL)
run in a thread pool."""
import os
from concurrent.futures import ThreadPoolExecutor

from ..log import warn


def compile_in_parallel(configs, elaborate, build, num_workers=None, ignore_error=False, name="kernel"):
    """[build(elaborate(c)) for c in configs], the builds on ``num_workers`` threads (default: one per CPU).
    With ignore_error, a configuration that fails gives None and a warning naming it; otherwise the first
    failure (in configuration order) is raised."""
    if num_workers is not None and (not isinstance(num_workers, int) or num_workers < 1):
        from ..errors import TileLangArgumentError

        raise TileLangArgumentError(f"par_compile(num_workers=...) takes a positive int, got {num_workers!r}")
    items, errors = [], {}
    for i, cfg in enumerate(configs):
        try:
            items.append(elaborate(cfg))
        except Exception as e:  # noqa: BLE001 -- reported below, in order
            if not ignore_error:
                raise
            errors[i] = e
            items.append(None)
    results = [None] * len(items)
    workers = min(num_workers or os.cpu_count() or 1, max(1, len(items)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {i: pool.submit(build, it) for i, it in enumerate(items) if it is not None}
        for i, fut in futures.items():
            try:
                results[i] = fut.result()
            except Exception as e:  # noqa: BLE001
                if not ignore_error:
                    raise
                errors[i] = e
    for i, e in sorted(errors.items()):
        warn(f"par_compile of '{name}': configuration {configs[i]!r} failed ({type(e).__name__}: "
             f"{str(e).splitlines()[0] if str(e) else ''}); its kernel is None")
    return results


def par_compile(funcs, out_idx=None, execution_backend=None, target=None, target_host=None, verbose=None,
                pass_configs=None, compile_flags=None, num_workers=None, ignore_error=False):
    """tilelang.par_compile: each @T.prim_func of ``funcs`` compiled with the same options, in parallel
    threads; the kernels in order. target / execution_backend default to $TILELANG_DEFAULT_TARGET /
    $TILELANG_EXECUTION_BACKEND, else "auto"."""
    from .. import _ffi
    from ..errors import TileLangTypeError
    from .compiler import _check_jit_options, compile as _compile

    _check_jit_options({"target_host": target_host, "compile_flags": compile_flags})
    funcs = list(funcs)
    for f in funcs:
        if not isinstance(f, _ffi.PrimFunc):
            raise TileLangTypeError(f"tilelang.par_compile takes @T.prim_func functions, got {type(f).__name__}")
    target = target or os.environ.get("TILELANG_DEFAULT_TARGET") or "auto"
    execution_backend = execution_backend or os.environ.get("TILELANG_EXECUTION_BACKEND") or None
    if execution_backend == "auto":
        execution_backend = None
    return compile_in_parallel(
        funcs, lambda f: f,
        lambda f: _compile(f, out_idx=out_idx, target=target, execution_backend=execution_backend,
                           pass_configs=pass_configs, verbose=bool(verbose)),
        num_workers, ignore_error, "par_compile")
