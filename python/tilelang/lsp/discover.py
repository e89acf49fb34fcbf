"""Which kernels a loaded file has, and with which arguments the editor tools compile them.

  - ``@T.prim_func`` functions built while the file is loaded (any PrimFunc in the module namespace whose
    definition is in this file);
  - ``@tilelang.jit`` factories of this file, called with their defaults or with the arguments a
    ``# tilelang: args=...`` comment on a decorator (or the def) line gives
    (``# tilelang: args=1024, 1024, 1024, block_K=64``; the values are evaluated in the module);
  - eager ``@tilelang.jit`` functions (the body is the kernel, sizes from ``T.const``): specialised with
    their annotated shapes, tensor parameters left out, each ``T.const`` size taken from the comment's
    keywords (``# tilelang: args=block_M=64, M=4096``) or else DEFAULT_SIZE; ``T.dynamic`` sizes stay
    symbolic;
  - ``@tilelang.autotune(configs=...)`` over either of those: checked with the first configuration.

A kernel that cannot be built this way is skipped with a note that says why; nothing is dropped silently.
"""
import ast
import inspect
import os
import re
import warnings

from .. import _ffi
from ..errors import TileLangError
from .diagnostics import _diag, error_diagnostic

_ARGS_COMMENT = re.compile(r"#\s*tilelang:\s*args\s*=\s*(.*?)\s*$")

# The value of a T.const size no comment gives: a size that fills the tiles of common kernels.
DEFAULT_SIZE = 1024


def _factory_args(doc, node, ns):
    """(args, kwargs, line) from a `# tilelang: args=...` comment on a decorator (or the def) line, or None."""
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    for line in range(first, node.lineno + 1):
        m = _ARGS_COMMENT.search(doc.line(line))
        if m:
            text = m.group(1)
            collector = "__tilelang_collect_args__"
            scope = dict(ns)
            scope[collector] = lambda *a, **k: (a, k)
            args, kwargs = eval(f"{collector}({text})", scope)  # noqa: S307 -- the user's own file, in the worker
            if text.startswith("(") and len(args) == 1 and isinstance(args[0], tuple) and not kwargs:
                args = args[0]
            return args, kwargs, line
    return None


def _const_names(node):
    """The names the function's `T.const("M, N")` calls declare, in order."""
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "const" and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            names += [p for p in re.split(r"[\s,]+", n.args[0].value.strip()) if p]
    return list(dict.fromkeys(names))


def _note(doc, node, diags, message, code):
    start, end = doc.stmt_range(node)
    diags.append(_diag(doc, start, end, "information", message, code))


def _missing(params, bound, optional=()):
    return [p.name for p in params if p.name not in bound and p.name not in optional
            and p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _bound_names(fn, args, kwargs):
    try:
        return set(inspect.signature(fn).bind_partial(*args, **kwargs).arguments)
    except TypeError:
        return set(kwargs)


def _eager_func(doc, node, jitted, args, kwargs, diags):
    """The eager function's PrimFunc for these arguments (T.const sizes filled in), or None with a note."""
    params = list(jitted.signature.parameters.values())
    bound = _bound_names(jitted.fn, args, kwargs)
    tensors = {n for n, k in jitted.param_kind.items() if k == "tensor"}
    missing = _missing(params, bound, optional=tensors)
    scalars = [n for n in missing if jitted.param_kind[n] == "scalar"]
    missing = [n for n in missing if n not in scalars]
    if missing:
        _note(doc, node, diags, f"eager @tilelang.jit function '{node.name}' is not compiled: its parameter(s) "
                                f"{', '.join(missing)} have no default; give them in a `# tilelang: args=...` "
                                "comment on the decorator line", "TileLangNoArgs")
        return None
    kwargs = dict(kwargs)
    for n in scalars:  # a run-time scalar's value does not change the kernel
        kwargs[n] = 0
    sizes = [n for n in _const_names(node) if n not in kwargs]
    for n in sizes:
        kwargs[n] = DEFAULT_SIZE
    if sizes:
        _note(doc, node, diags, f"'{node.name}' is checked with {'='.join(sizes)}={DEFAULT_SIZE} (T.const); give other "
                                f"sizes in a `# tilelang: args={sizes[0]}=...` comment", "TileLangDefaultSizes")
    return jitted.get_tir(*args, **kwargs)


def _first_config(doc, node, tuner, args, kwargs, diags):
    """The first autotune configuration, less what the comment gives; None (with a note) when there is none."""
    try:
        configs = tuner.configs
        if callable(configs):
            try:
                configs = configs(*args, **kwargs)
            except TypeError:
                configs = configs()
        configs = list(configs)
    except Exception as e:  # noqa: BLE001 -- user code
        _note(doc, node, diags, f"autotuned '{node.name}' is not compiled: its configs raised {type(e).__name__}: {e}",
              "TileLangAutotuneConfigs")
        return None
    if not configs or not isinstance(configs[0], dict):
        _note(doc, node, diags, f"autotuned '{node.name}' is not compiled: its configs are not a non-empty list of "
                                "dicts", "TileLangAutotuneConfigs")
        return None
    bound = _bound_names(tuner.factory, args, kwargs)
    config = {k: v for k, v in configs[0].items() if k not in bound}
    shown = ", ".join(f"{k}={v!r}" for k, v in config.items())
    _note(doc, node, diags, f"autotuned '{node.name}' is checked with its first configuration ({shown}) of "
                            f"{len(configs)}", "TileLangAutotuneFirstConfig")
    return config


def find_kernels(doc, ns, rec, diags):
    """[(label, PrimFunc, def_line, pass_configs)] of the file; notes in ``diags`` for what is skipped."""
    kernels, seen = [], set()
    for value in list(ns.values()):
        if isinstance(value, _ffi.PrimFunc) and id(value) not in seen:
            span = rec.span_of(value)
            if span is not None and os.path.abspath(span[0]) == doc.path:
                seen.add(id(value))
                kernels.append((value.name, value, span[1], {}))
    for name, value in list(ns.items()):
        tuner = getattr(value, "tuner", None)
        jitted = tuner.jitted if tuner is not None and hasattr(tuner, "jitted") else value
        wrapped = getattr(jitted, "__wrapped__", None)
        if not hasattr(jitted, "jit_options") or wrapped is None or not callable(wrapped):
            continue
        code = getattr(wrapped, "__code__", None)
        if code is None or os.path.abspath(code.co_filename) != doc.path:
            continue
        node = next((n for n in (doc.tree.body if doc.tree else [])
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == wrapped.__name__), None)
        if node is None:
            continue
        try:
            given = _factory_args(doc, node, ns)
        except Exception as e:  # noqa: BLE001
            line = next(i for i in range(min([d.lineno for d in node.decorator_list] + [node.lineno]), node.lineno + 1)
                        if _ARGS_COMMENT.search(doc.line(i)))
            start, end = doc.line_range(line)
            diags.append(_diag(doc, start, end, "error", f"cannot evaluate the `# tilelang: args=` comment: "
                                                          f"{type(e).__name__}: {e}", "TileLangArgsComment"))
            continue
        args, kwargs = (given[0], dict(given[1])) if given is not None else ((), {})
        if tuner is not None:
            config = _first_config(doc, node, tuner, args, kwargs, diags)
            if config is None:
                continue
            kwargs.update(config)
        eager = getattr(jitted, "is_eager", False)
        what = "eager @tilelang.jit function" if eager else "@tilelang.jit factory"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if eager:
                    func = _eager_func(doc, node, jitted, args, kwargs, diags)
                    if func is None:
                        continue
                else:
                    missing = _missing(inspect.signature(wrapped).parameters.values(),
                                       _bound_names(wrapped, args, kwargs))
                    if missing:
                        _note(doc, node, diags, f"{what} '{node.name}' is not compiled: its parameter(s) "
                                                f"{', '.join(missing)} have no default; give them in a "
                                                "`# tilelang: args=...` comment on the decorator line",
                              "TileLangNoArgs")
                        continue
                    func = wrapped(*args, **kwargs)
        except TileLangError as e:
            diags.append(error_diagnostic(doc, e, node))
            continue
        except Exception as e:  # noqa: BLE001 -- user code
            d = error_diagnostic(doc, e, node, severity="warning")
            d["message"] = f"calling the {what} '{node.name}' raised {d['message']}"
            diags.append(d)
            continue
        if not isinstance(func, _ffi.PrimFunc):
            start, end = doc.stmt_range(node)
            diags.append(_diag(doc, start, end, "warning", f"{what} '{node.name}' returned a "
                                                            f"{type(func).__name__}, not a @T.prim_func",
                               "TileLangTypeError"))
            continue
        span = rec.span_of(func)
        def_line = span[1] if span is not None and os.path.abspath(span[0]) == doc.path else node.lineno
        if id(func) not in seen:
            seen.add(id(func))
            kernels.append((name, func, def_line, dict(jitted.jit_options.get("pass_configs") or {})))
    return kernels
