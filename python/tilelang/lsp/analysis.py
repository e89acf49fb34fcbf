"""What the editor tools know about one Python file: its kernels, their compile errors and warnings, and
the compiler's decisions placed at the user's lines (inlay hints, hovers, code lenses).

This module runs the user's file, so it only ever runs inside a worker process (tilelang.lsp.worker),
never inside the language server. ``analyze`` returns plain JSON-able data: positions are LSP positions
(0-based lines, UTF-16 columns) plus the compiler's own 1-based line:col for command-line output.

Which kernels a file has (prim_funcs, @tilelang.jit factories, eager @tilelang.jit functions, autotuned
ones) and with which arguments they are checked is tilelang.lsp.discover's part.
"""
import ast
import contextlib
import linecache
import os
import re
import sys
import time
import traceback
import types
import warnings

from .. import _ffi
from ..errors import TileLangError
from .diagnostics import _diag, error_diagnostic, error_message

_SCOPE_NAMES = {"shared": "shared", "shared.dyn": "shared", "local.fragment": "fragment", "local": "local",
                "local.var": "var"}


# ---- positions ---------------------------------------------------------------------------------------
class Document:
    """The text of the file with conversions between the compiler's byte columns and LSP's UTF-16 ones."""

    def __init__(self, path, text):
        self.path, self.text = path, text
        self.lines = re.split(r"\r\n|\r|\n", text)
        try:
            self.tree = ast.parse(text, path)
        except SyntaxError:
            self.tree = None
        self._stmts = {}
        self._nodes = {}
        if self.tree is not None:
            for node in ast.walk(self.tree):  # breadth first: outer nodes before the nodes inside them
                if not hasattr(node, "lineno"):
                    continue
                if isinstance(node, ast.stmt):
                    self._stmts.setdefault(node.lineno, []).append(node)
                self._nodes.setdefault((node.lineno, node.col_offset), []).append(node)

    def line(self, lineno):
        return self.lines[lineno - 1] if 1 <= lineno <= len(self.lines) else ""

    def utf16(self, lineno, byte_col):
        """LSP character of a 0-based UTF-8 byte column of 1-based line ``lineno``."""
        prefix = self.line(lineno).encode("utf-8")[:max(byte_col, 0)].decode("utf-8", errors="ignore")
        return len(prefix.encode("utf-16-le")) // 2

    def pos(self, lineno, byte_col):
        return [lineno - 1, self.utf16(lineno, byte_col)]

    def line_range(self, lineno):
        """The range of a line's text without its indentation and trailing whitespace."""
        text = self.line(lineno)
        start = len(text) - len(text.lstrip())
        code = text.rstrip()
        return [lineno - 1, len(text[:start].encode("utf-16-le")) // 2], [lineno - 1, len(code.encode("utf-16-le")) // 2]

    def stmt_at(self, lineno):
        """The innermost statement that starts on a line (None when the line starts none)."""
        found = self._stmts.get(lineno)
        return found[-1] if found else None

    def header_end(self, node):
        """Where a statement's own text ends: a simple statement's end, or the end of a compound statement's
        header (`with ...:`, `for ...:`), after its colon."""
        if isinstance(node, (ast.With, ast.AsyncWith)):
            last = node.items[-1]
            end = last.optional_vars or last.context_expr
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            end = node.iter
        elif isinstance(node, (ast.If, ast.While)):
            end = node.test
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = self.line(node.lineno)
            return node.lineno, len(text.split("#")[0].rstrip().encode("utf-8"))
        else:
            return node.end_lineno, node.end_col_offset
        line, col = end.end_lineno, end.end_col_offset
        raw = self.line(line).encode("utf-8")
        rest = raw[col:]
        stripped = rest.lstrip()
        skip = len(rest) - len(stripped)
        if stripped.startswith(b")"):  # `with (a as b):` style parentheses
            col += skip + 1
            rest = raw[col:]
            stripped = rest.lstrip()
            skip = len(rest) - len(stripped)
        if stripped.startswith(b":"):
            col += skip + 1
        return line, col

    def stmt_range(self, node):
        end_line, end_col = self.header_end(node)
        return self.pos(node.lineno, node.col_offset), self.pos(end_line, end_col)

    def range_at_line(self, lineno):
        """The range of the statement that starts on a line, or of the line's text."""
        node = self.stmt_at(lineno)
        if node is not None:
            return self.stmt_range(node)
        return self.line_range(lineno)

    def range_at(self, lineno, col1):
        """The range an error at the compiler's 1-based (line, byte column) covers: the outermost node that
        starts exactly there (a compound statement only up to its header), else the rest of the line."""
        nodes = self._nodes.get((lineno, col1 - 1))
        if nodes:
            node = nodes[0]
            if isinstance(node, ast.stmt):
                return self.stmt_range(node)
            return self.pos(node.lineno, node.col_offset), self.pos(node.end_lineno, node.end_col_offset)
        start = self.pos(lineno, col1 - 1)
        end = self.line_range(lineno)[1]
        if end[1] <= start[1]:
            end = [start[0], len(self.line(lineno).encode("utf-16-le")) // 2]
        return start, end

    def hint_pos(self, lineno):
        node = self.stmt_at(lineno)
        if node is None:
            return self.line_range(lineno)[1]
        line, col = self.header_end(node)
        return self.pos(line, col)

    def kernel_def(self, def_line):
        for node in self._stmts.get(def_line, []):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None


# ---- running the file -------------------------------------------------------------------------------------
class Recorder:
    """Remembers where the front end created each buffer and function (their source spans), so that hints
    land on the user's allocation lines and kernels are told apart from functions defined elsewhere."""

    def __init__(self):
        self.buffers = []  # (Buffer, span)
        self.funcs = []  # (PrimFunc, span)

    @contextlib.contextmanager
    def installed(self):
        orig_buffer, orig_func = _ffi.buffer, _ffi.prim_func

        def buffer(*args, **kwargs):
            b = orig_buffer(*args, **kwargs)
            span = kwargs.get("span", args[4] if len(args) > 4 else None)
            scope = kwargs.get("scope", args[3] if len(args) > 3 else "global")
            if span is not None and scope != "global":
                self.buffers.append((b, tuple(span)))
            return b

        def prim_func(*args, **kwargs):
            f = orig_func(*args, **kwargs)
            span = kwargs.get("span", args[4] if len(args) > 4 else None)
            if span is not None:
                self.funcs.append((f, tuple(span)))
            return f

        _ffi.buffer, _ffi.prim_func = buffer, prim_func
        try:
            yield self
        finally:
            _ffi.buffer, _ffi.prim_func = orig_buffer, orig_func

    def span_of(self, func):
        for f, span in self.funcs:
            if f is func:
                return span
        return None


def load_module(doc, diags):
    """Runs the file top-level statement by statement as a module named '__tilelang_check__' (so its
    `if __name__ == "__main__":` block does not run). A statement that raises is reported and the rest
    still runs, so one failing import does not hide the kernels below it."""
    mod = types.ModuleType("__tilelang_check__")
    mod.__file__ = doc.path
    sys.modules[mod.__name__] = mod
    linecache.cache[doc.path] = (len(doc.text), None, doc.text.splitlines(True), doc.path)
    folder = os.path.dirname(doc.path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.argv = [doc.path]
    try:
        tree = ast.parse(doc.text, doc.path)
    except SyntaxError as e:
        diags.append(_syntax_diagnostic(doc, e))
        return mod.__dict__
    for stmt in tree.body:
        try:  # what the parser accepts and the compiler does not: `return` or `break` outside their blocks, ...
            code = compile(ast.Module(body=[stmt], type_ignores=[]), doc.path, "exec")
        except SyntaxError as e:
            diags.append(_syntax_diagnostic(doc, e, stmt))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(code, mod.__dict__)
        except KeyboardInterrupt:
            raise
        except TileLangError as e:
            diags.append(error_diagnostic(doc, e, stmt))
        except BaseException as e:  # noqa: BLE001 -- user code: report it, keep loading the rest
            d = error_diagnostic(doc, e, stmt, severity="information")
            d["message"] = f"while loading this file to find its kernels, this statement raised {d['message']}"
            diags.append(d)
    return mod.__dict__


def _syntax_diagnostic(doc, err, stmt=None):
    """An error diagnostic for Python's SyntaxError in this file, at its line and column (the statement's
    when it has none)."""
    line = err.lineno or (stmt.lineno if stmt is not None else 1)
    col = max((err.offset or ((stmt.col_offset + 1) if stmt is not None else 1)) - 1, 0)
    start = [line - 1, len(doc.line(line)[:col].encode("utf-16-le")) // 2]
    end = doc.line_range(line)[1] if line <= len(doc.lines) else start
    return _diag(doc, start, end, "error", f"invalid Python: {err.msg}", "SyntaxError", line, col + 1)


# ---- what the compiler decided --------------------------------------------------------------------------------
def _dtype_bits(dtype):
    if dtype == "bool":
        return 8
    m = re.search(r"(\d+)", dtype)
    bits = int(m.group(1)) if m else 32
    lanes = re.search(r"x(\d+)$", dtype)
    return bits * (int(lanes.group(1)) if lanes else 1)


def _located(doc, lines):
    """[(line, text)] for the entries of `lines` ('file:line: text') that are in this file."""
    out = []
    prefix = doc.path + ":"
    for entry in lines:
        if entry.startswith(prefix):
            m = re.match(r"(\d+): (.*)", entry[len(prefix):], re.S)
            if m:
                out.append((int(m.group(1)), m.group(2)))
    return out


def smem_rows(report):
    """{buffer: (stages, bytes)} from the shared-memory report's table."""
    rows = {}
    for line in report.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 6 and parts[3].isdigit() and parts[4].isdigit():
            rows[parts[0]] = (int(parts[3]), int(parts[4]))
    return rows


def short_choice(text, is_warning=False):
    """The part of a decision worth an inlay hint: without the op prefix, up to the first detail. A copy
    that falls back says what it does instead (its reason is in the warning); other warnings keep their
    first clause."""
    fallback = re.match(r"T\.\w+ \S+ -> \S+ does not use ([^:]+): .*?(?:; (.*))?$", text, re.S)
    if fallback:
        text = f"no {fallback.group(1)}" + (f": {fallback.group(2)}" if fallback.group(2) else " (see the warning)")
    elif is_warning:
        text = text.split("; ")[0]
    else:
        text = re.sub(r"^T\.\w+(?: \S+ -> \S+)?: ", "", text)
        text = text.replace("parallel loop nest partitioned by", "partitioned by")
        text = text.replace(" element(s) per thread", " elem/thread")
        text = re.split(r"; | \(", text, maxsplit=1)[0]
    return text if len(text) <= 80 else text[:77] + "..."


def _is_call_to(node, attr):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr)


def kernel_info(kernel):
    """The compiled kernel's facts as JSON-able data (CUDA only has choices, layouts and resources)."""
    info = {"kind": kernel.kind, "from_cache": bool(kernel.from_cache)}
    if kernel.kind == "cuda":
        mod = kernel.compiled
        info.update(choices=list(kernel.choices), layouts=dict(kernel.layouts), warnings=list(kernel.warnings),
                    resources=dict(kernel.get_resource_usage()), smem_report=kernel.get_shared_memory_report(),
                    smem_bytes=int(mod.smem_bytes), threads=int(mod.threads), arch=mod.target.arch,
                    compiler=mod.compiler)
        # the generated lines of each tile op, keyed "file:line" like the choices
        src = kernel.get_kernel_source().splitlines()
        code = {}
        for f, line, first, last in kernel.get_source_map():
            code.setdefault(f"{f}:{line}", []).append("\n".join(src[first - 1:last]))
        info["code"] = code
    return info


def kernel_features(doc, node, buffers, info, target_label):
    """Inlay hints and hovers for one kernel: allocations, pipelines, tile ops and the T.Kernel line."""
    hints, hovers = [], []
    lo, hi = (node.lineno, node.end_lineno) if node is not None else (0, 1 << 30)
    cuda = info is not None and info.get("kind") == "cuda"
    choices = _located(doc, info.get("choices", [])) if cuda else []
    by_line = {}
    for line, text in choices:
        if lo <= line <= hi:
            by_line.setdefault(line, []).append(text)
    stages = smem_rows(info["smem_report"]) if cuda else {}
    layouts = info.get("layouts", {}) if cuda else {}
    used = set()

    def add(line, label, hover, kind="type"):
        if (line, label) in used:
            return
        used.add((line, label))
        hints.append({"position": doc.hint_pos(line), "label": label, "kind": kind, "line": line})
        start, end = doc.range_at_line(line)
        hovers.append({"line": line, "range": [start, end], "markdown": hover})

    # allocations
    for buf, span in buffers:
        line = span[1]
        if not lo <= line <= hi:
            continue
        shape = [_ffi.const_int(d) for d in buf.shape]
        scope = _SCOPE_NAMES.get(buf.scope, buf.scope)
        n = 1
        for d in shape:
            n *= d if d is not None else 0
        nbytes = n * _dtype_bits(buf.dtype) // 8
        if scope == "var":
            label = f"{buf.dtype} var, {nbytes} B"
        else:
            label = f"{'x'.join(str(d) for d in shape)} {buf.dtype} {scope}, {nbytes} B"
        details = [f"`{buf.name}`: shape ({', '.join(str(d) for d in shape)}), {buf.dtype}, scope `{buf.scope}`, "
                   f"{nbytes} bytes"]
        if buf.name in stages and stages[buf.name][0] > 1:
            st, total = stages[buf.name]
            label += f" x {st} stages"
            details.append(f"{st} pipeline stages: {total} bytes of shared memory in all")
        if scope == "fragment" and buf.name in layouts:
            layout = layouts[buf.name]
            per = None
            for texts in by_line.values():
                for t in texts:
                    m = re.search(re.escape(layout) + r", (\d+) element\(s\) per thread", t)
                    if m:
                        per = int(m.group(1))
            label += f", {layout}" + (f", {per} elem/thread" if per is not None else "")
            details.append(f"inferred layout: `{layout}`" + (f", {per} elements per thread" if per else ""))
        add(line, label, f"**{buf.name}** ({target_label})\n\n" + "\n\n".join(details))

    if node is not None:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.For, ast.AsyncFor)) and _is_call_to(sub.iter, "Pipelined"):
                texts = by_line.get(sub.lineno, [])
                pipe = next((t for t in texts if t.startswith("T.Pipelined")), None)
                if pipe is None:
                    continue
                per_stage = sum(total // st for st, total in stages.values() if st > 1)
                label = short_choice(pipe) + (f", {per_stage} B smem/stage" if per_stage else "")
                add(sub.lineno, label, f"**T.Pipelined** ({target_label})\n\n{pipe}\n\n"
                    f"shared memory per stage: {per_stage} bytes", kind="other")
                by_line.pop(sub.lineno, None)
            if isinstance(sub, (ast.With, ast.AsyncWith)) and any(_is_call_to(it.context_expr, "Kernel")
                                                                   for it in sub.items) and cuda:
                res = info["resources"]
                smem = res.get("shared_bytes", 0) + res.get("static_shared_bytes", 0)
                spills = res.get("spill_stores", 0) + res.get("spill_loads", 0)
                label = f"smem {smem} B, {res.get('registers', 0)} registers, {spills} B spilled"
                hover = (f"**T.Kernel** ({target_label}, {info.get('compiler', '')}): {info.get('threads')} threads, "
                         f"{res.get('registers', 0)} registers/thread, {spills} bytes spilled "
                         f"({res.get('spill_stores', 0)} stored, {res.get('spill_loads', 0)} loaded), "
                         f"{res.get('stack_bytes', 0)} bytes of stack\n\n```\n{info['smem_report'].rstrip()}\n```")
                add(sub.lineno, label, hover, kind="other")
    alloc_lines = {span[1] for _, span in buffers}
    for line, texts in sorted(by_line.items()):
        if line in alloc_lines:
            continue
        warned = {t for _, t in _located(doc, info.get("warnings", []))}
        label = "; ".join(dict.fromkeys(short_choice(t, t in warned) for t in texts))
        hover = f"**TileLang decisions** ({target_label})\n\n" + "\n".join(f"- {t}" for t in texts)
        hover += _generated_code(doc, line, info)
        add(line, label, hover, kind="other")
    return hints, hovers


def _generated_code(doc, line, info, limit=40):
    """The generated lines this DSL line produced (each tile op's code in the kernel source)."""
    blocks = (info or {}).get("code", {}).get(f"{doc.path}:{line}", [])
    if not blocks:
        return ""
    lines = "\n\n".join(blocks).splitlines()
    more = f"\n... ({len(lines) - limit} more lines)" if len(lines) > limit else ""
    return "\n\n**Generated code**\n\n```cuda\n" + "\n".join(lines[:limit]) + more + "\n```"


def _target_label(target):
    from ..jit import target as _target

    kind, opts = _target.normalize(target)
    return f"{kind} {opts['arch']}" if "arch" in opts else kind


def analyze(path, text, target="cuda -arch=sm_80"):
    """Runs the file, compiles each kernel for `target` and returns diagnostics, hints, hovers, code
    lenses and per-kernel facts (see the module docstring)."""
    import tilelang

    t0 = time.perf_counter()
    doc = Document(os.path.abspath(path), text)
    diags, hints, hovers, lenses, kernels_out = [], [], [], [], []
    rec = Recorder()
    try:
        target_label = _target_label(target)
    except TileLangError as e:
        diags.append(_diag(doc, [0, 0], [0, 0], "error", f"tilelang target {target!r}: {error_message(e)}",
                           type(e).__name__, 1, 1))
        return _result(doc, target, diags, hints, hovers, lenses, kernels_out, t0)
    from .discover import find_kernels

    with rec.installed():
        ns = load_module(doc, diags)
        kernels = find_kernels(doc, ns, rec, diags)
    local_buffers = [(b, s) for b, s in rec.buffers if os.path.abspath(s[0]) == doc.path]
    for label, func, def_line, pass_configs in kernels:
        node = doc.kernel_def(def_line)
        entry = {"name": func.name, "label": label, "def_line": def_line, "ok": False, "error": None}
        info = None
        try:
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kernel = tilelang.compile(func, target=target, pass_configs=pass_configs)
            info = kernel_info(kernel)
            info["compile_ms"] = (time.perf_counter() - t1) * 1e3
            entry.update(info, ok=True)
        except TileLangError as e:
            diags.append(error_diagnostic(doc, e, node))
            entry["error"] = f"{type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001 -- a compiler bug: report it at the kernel, keep going
            d = error_diagnostic(doc, e, node)
            d["message"] = f"internal compiler error (please report it): {d['message']}"
            diags.append(d)
            entry["error"] = traceback.format_exc()
        if info is not None:
            for line, text in _located(doc, info.get("warnings", [])):
                start, end = doc.range_at_line(line)
                diags.append(_diag(doc, start, end, "warning", text, "TileLangPerformanceWarning", line,
                                   start[1] + 1))
            for w in info.get("warnings", []):
                if not w.startswith(doc.path + ":") and node is not None:
                    start, end = doc.stmt_range(node)
                    diags.append(_diag(doc, start, end, "warning", w, "TileLangPerformanceWarning"))
        h, v = kernel_features(doc, node, local_buffers, info, target_label)
        hints += h
        hovers += v
        if node is not None:
            start, end = doc.stmt_range(node)
            lenses.append({"range": [start, end], "kernel": label,
                           "line": node.lineno})
        kernels_out.append(entry)
    return _result(doc, target, diags, hints, hovers, lenses, kernels_out, t0)


def _result(doc, target, diags, hints, hovers, lenses, kernels, t0):
    unique, seen = [], set()
    for d in diags:
        key = (tuple(d["range"][0]), tuple(d["range"][1]), d["message"])
        if key not in seen:
            seen.add(key)
            unique.append(d)
    unique.sort(key=lambda d: (d["range"][0], d["message"]))
    hints.sort(key=lambda h: tuple(h["position"]))
    return {"path": doc.path, "target": target, "diagnostics": unique, "hints": hints, "hovers": hovers,
            "lenses": lenses, "kernels": kernels, "elapsed_ms": (time.perf_counter() - t0) * 1e3}


def lower_trace(path, text, kernel_name, target, out_dir):
    """Writes the lower trace of one kernel of the file (by its function name or its @tilelang.jit factory's
    name); returns {'index': path of index.html, 'summary': ...} or {'error': message}."""
    from ..tools.lower_trace import ir_lower_trace

    doc = Document(os.path.abspath(path), text)
    diags = []
    rec = Recorder()
    from .discover import find_kernels

    with rec.installed():
        ns = load_module(doc, diags)
        kernels = find_kernels(doc, ns, rec, diags)
    names = list(dict.fromkeys([k[0] for k in kernels] + [k[1].name for k in kernels]))
    if kernel_name is None and len(kernels) == 1:
        match = kernels
    else:
        match = [k for k in kernels if kernel_name in (k[0], k[1].name)]
    if not match:
        errors = [d for d in diags if d["severity"] == "error"]
        why = "".join(f"\n{doc.path}:{d['lineno']}:{d['colno']}: error: {d['message']}" for d in errors)
        which = "no kernel" if kernel_name is None else f"no kernel named '{kernel_name}'"
        if kernel_name is None and kernels:
            which = "more than one kernel; name one with FILE::KERNEL"
        return {"error": f"{which} in {doc.path} (kernels: {', '.join(names) or 'none'}){why}"}
    func = match[0][1]
    try:
        trace = ir_lower_trace(func, target=target, out_dir=out_dir)
    except TileLangError as e:
        return {"error": str(e)}
    return {"index": os.path.join(out_dir, "index.html"), "dir": out_dir, "kernel": match[0][0],
            "summary": trace.summary()}
