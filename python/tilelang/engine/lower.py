"""``tilelang.lower(func, target=...)``: a PrimFunc lowered and its kernel source generated, without building
or loading it (TileLang's lowering entry; ``tilelang.compile`` / ``@tilelang.jit`` give a callable kernel)."""
from .. import _ffi
from ..errors import TileLangTypeError


class CompiledArtifact:
    """What ``tilelang.lower`` returns (TileLang's field names): ``kernel_source`` (the generated device
    code), ``device_mod`` (the lowered PrimFunc, thread-level IR), ``params`` (each with .name, .dtype,
    .shape), ``target``. ``host_mod`` and ``rt_mod`` are None: this compiler generates no host code (the
    runtime launches from the kernel's parameter table) and lowering loads nothing. ``binary`` holds the
    device binary when lowered with enable_device_compile=True (a cubin, code object, shared library, ...)."""

    def __init__(self, compiled, func, target):
        from ..jit.kernel import kernel_params

        self._compiled = compiled
        self.kernel_source = compiled.source
        self.device_mod = compiled.lowered
        self.host_mod = None
        self.rt_mod = None
        self.target = target
        self.target_host = None
        self.binary = bytes(compiled.binary) if getattr(compiled, "binary", None) else None
        self.params = kernel_params(func)

    @property
    def warnings(self):
        return list(self._compiled.warnings)

    def __repr__(self):
        return f"CompiledArtifact({self.device_mod.name!r}, target={self.target}, {len(self.kernel_source)} chars)"


def lower(func_or_mod, target="auto", target_host=None, runtime_only=False, enable_host_codegen=False,
          enable_device_compile=False, pass_configs=None):
    """Lowers ``func_or_mod`` (a @T.prim_func) for ``target`` and generates its kernel source.
    ``enable_device_compile=True`` also builds the device binary (``artifact.binary``). ``target_host`` and
    ``enable_host_codegen`` have no effect here (no host code is generated: a warning says so); ``runtime_only``
    is accepted as in TileLang (lowering builds nothing either way)."""
    from ..jit import target as _target
    from ..jit.headers import include_dir
    from ..log import warn
    from ..transform import normalize_pass_configs

    if not isinstance(func_or_mod, _ffi.PrimFunc):
        hint = (": for an eager @tilelang.jit function pass f.get_tir(...)" if hasattr(func_or_mod, "get_tir")
                else "")
        raise TileLangTypeError(f"tilelang.lower expects a @T.prim_func, got {type(func_or_mod).__name__}{hint}")
    if target_host is not None or enable_host_codegen:
        warn("tilelang.lower(target_host= / enable_host_codegen=) has no effect in TileLang-C++: no host code is "
             "generated (the runtime launches the kernel from its parameter table)")
    del runtime_only
    requested = _target.Target(target)
    resolved = _target.Target(_ffi.resolve_target(str(requested), bool(enable_device_compile)))
    cfg = {k: ("1" if v is True else "0" if v is False else str(v))
           for k, v in (normalize_pass_configs(pass_configs) or {}).items()}
    compiled = _ffi.compile(func_or_mod, str(resolved), cfg, include_dir(), True, "", bool(enable_device_compile))
    return CompiledArtifact(compiled, func_or_mod, resolved)
