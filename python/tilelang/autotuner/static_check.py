"""Static pruning: the checks a candidate must pass that need only lowering, no toolchain and no device.

A configuration whose kernel the target cannot hold (shared memory over the limit, on-chip buffers over
the CPU target's budget, per-thread registers over the limit), or that layout inference, the semantic
checks or the factory itself reject, is known to fail before any compiler runs. The distributed executor
drops such configurations in the driver, with the compiler's own error as the reason, instead of shipping
them to workers that would only report the same error.
"""
from .. import _ffi
from ..jit import target as _target
from ..jit.headers import include_dir


def lowering_check(func, options, factory=None):
    """Raises the compiler's error when `func` cannot be built with the jit `options` (out_idx, target,
    execution_backend, pass_configs; the target resolved: a CUDA target names its arch). `factory`: the
    function that made `func`, to locate the kernel's definition in errors found here."""
    from ..transform import normalize_pass_configs

    target = _target.Target(_target.default_target(options.get("target")))
    pass_configs = normalize_pass_configs(options.get("pass_configs"))
    cfg = {k: ("1" if v is True else "0" if v is False else str(v)) for k, v in pass_configs.items()}
    # the one compile entry point, stopped before the toolchain: lowering and code generation check the
    # on-chip memory limits and the layouts of every registered backend
    mod = _ffi.compile(func, str(target), cfg, include_dir(), True, "", False)
    if _ffi.backend_info(target.kind)[3] and target.max_registers > 0:  # a GPU kind with a register file
        check_registers(mod, target, definition_location(factory, func.name))


def register_lower_bound(mod):
    """32-bit registers every thread needs at least: the per-thread storage of its fragments and local
    arrays (the lowered kernel's thread-local allocations), which live in registers or spill."""
    return sum((size_bytes + 3) // 4 for size_bytes in _thread_local_bytes(mod.lowered))


def _thread_local_bytes(lowered):
    """Byte sizes of the thread-local arrays of a lowered CUDA kernel, read from its printed IR (the
    printer is the canonical, re-parseable form: `name = T.alloc_local((n, ...), "dtype")`)."""
    import re

    out = []
    text = _ffi.print_func(lowered)
    for m in re.finditer(r'T\.alloc_(?:local|fragment)\(\(([^)]*)\),\s*"([a-z0-9_]+)"([^)]*)\)', text):
        if "data=" in m.group(3):  # a view of another array's storage
            continue
        dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
        if not all(d.isdigit() for d in dims):
            continue
        n = 1
        for d in dims:
            n *= int(d)
        out.append(n * _dtype_bytes(m.group(2)))
    return out


def _dtype_bytes(name):
    import re

    m = re.search(r"(\d+)", name)
    bits = int(m.group(1)) if m else 32
    if name.startswith("float8"):
        bits = 8
    return max(1, bits // 8)


def definition_location(factory, name):
    """'file:line:col: ' of the `def name` the factory holds (its kernel), or '' when it cannot be found."""
    import linecache

    code = getattr(factory, "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        if c.co_name == name:
            for line in range(c.co_firstlineno, c.co_firstlineno + 20):  # past the decorators
                text = linecache.getline(c.co_filename, line)
                col = text.find(f"def {name}")
                if col >= 0:
                    return f"{c.co_filename}:{line}:{col + 1}: "
            return f"{c.co_filename}:{c.co_firstlineno}: "
        stack.extend(k for k in c.co_consts if hasattr(k, "co_name"))
    return ""


def check_registers(mod, target, where=""):
    from ..errors import TileLangResourceError

    limit = int(getattr(target, "max_registers", 0) or 0)
    need = register_lower_bound(mod)
    if limit and need > limit:
        raise TileLangResourceError(f"{where}kernel '{mod.kernel_name}' keeps at least {need} 32-bit registers of "
                                    f"fragments and local arrays per thread, over the {limit}-register limit of "
                                    f"{target.arch}; use smaller tiles or more threads")
