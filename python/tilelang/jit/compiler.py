"""tilelang.compile: a PrimFunc to a JITKernel, memoised in the process by the function's structure and the
options (the disk cache is the backend's)."""
from .. import _ffi
from ..errors import TileLangTypeError
from .kernel import JITKernel
from .target import Target, default_execution_backend, default_target


def compile(func, out_idx=None, target=None, execution_backend=None, pass_configs=None, verbose=False,  # noqa: A001
            target_host=None):
    """Compiles a PrimFunc for a target and returns a callable kernel."""
    if not isinstance(func, _ffi.PrimFunc):
        raise TileLangTypeError(f"tilelang.compile expects a @T.prim_func, got {type(func).__name__}")
    if target_host is not None:
        _check_jit_options({"target_host": target_host})
    from ..transform import normalize_pass_configs

    pass_configs = normalize_pass_configs(pass_configs)
    # no target / backend given: the environment's defaults, as TileLang's ($TILELANG_DEFAULT_TARGET,
    # $TILELANG_EXECUTION_BACKEND)
    target = default_target(target)
    execution_backend = default_execution_backend(execution_backend)
    # A second compile of an unchanged function in this process is a lookup keyed on the function's
    # structural hash, its source locations (diagnostics name lines), the canonical target and the
    # options, before any lowering.
    from ..tools.lower_trace import trace_enabled

    memo = not verbose and not trace_enabled() and _ffi.cache_policy()[0]
    if memo:
        key = (func.name, _ffi.structural_hash(func), _ffi.span_hash(func), str(Target(target or "auto")),
               execution_backend,
               _freeze(out_idx), _freeze(pass_configs), _ffi.cache_policy()[1])
        for f, k in _MEMO.get(key, ()):
            if f is func or _ffi.structural_equal(f, func):
                return k
    kernel = JITKernel(func, out_idx=out_idx, target=target or "auto", execution_backend=execution_backend,
                       pass_configs=pass_configs, verbose=verbose)
    if memo:
        _MEMO.setdefault(key, []).append((func, kernel))
    return kernel


_MEMO = {}


def clear_compile_memo():
    """Forgets the kernels compiled in this process (the disk cache is unaffected)."""
    _MEMO.clear()


# TileLang's other @tilelang.jit options: accepted, with a warning saying what they do here.
_JIT_OPTIONS_NOTED = {
    "target_host": "the host code is always built for this machine",
    "debug_root_path": "use kernel.get_kernel_source() or TL_LOWER_TRACE=1 (written under TL_LOWER_TRACE_DIR) "
                       "to see the generated code",
    "compile_flags": "pass host-compiler flags with pass_configs={'cpu.compile_flags': ...}",
}


def _check_jit_options(kwargs):
    from ..log import warn

    for k, v in kwargs.items():
        if k not in _JIT_OPTIONS_NOTED:
            raise TileLangTypeError(f"@tilelang.jit got an unknown option '{k}'")
        if v is not None:
            warn(f"@tilelang.jit({k}=...) is accepted but has no effect in TileLang-C++: {_JIT_OPTIONS_NOTED[k]}")


def _freeze(x):
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    return x
