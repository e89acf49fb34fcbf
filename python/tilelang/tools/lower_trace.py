"""The lower trace: the IR after every pass of a target's pipeline, how long each pass took, the final
source, and a self-contained HTML page with each pass's diff against the IR before it.

The trace comes from the one compile entry point (``_ffi.compile(..., trace=True)``), the same call the
JIT makes: with TL_LOWER_TRACE set, the JIT compiles once with the trace on and writes it, so the trace
always shows the kernel that was built (its target, the device's arch, its pass configs). Every
registered backend (``_ffi.backend_kinds()``) has one.

The environment, spelled as TileLang spells it:
  TL_LOWER_TRACE      0/off/false/no or unset: no trace; 1/on/true/yes/html: the HTML page and the per-pass
                      files; terminal: the pass summary and each pass's diff on stderr; both: the two.
                      Any other value is taken as the directory itself (this project's earlier spelling).
  TL_LOWER_TRACE_DIR  where the traces go: ./tmp/lower_trace_dir (relative to the working directory) unless set.
Each kernel's trace is the folder <function>_<kind>_<arch>_<hash> there, e.g. main_cuda_sm_90a_1a2b3c4d5e.
"""
import difflib
import hashlib
import html
import json
import os
import re
import sys

from .. import _ffi
from ..errors import TileLangTypeError, TileLangUnsupportedError
from ..jit import target as _target

# TileLang's default trace directory, relative to the working directory.
DEFAULT_TRACE_DIR = os.path.join(".", "tmp", "lower_trace_dir")
_OFF = ("", "0", "false", "no", "off")
_MODES = {"1": "html", "true": "html", "yes": "html", "on": "html", "html": "html", "terminal": "terminal",
          "both": "both"}


def trace_settings():
    """(mode, directory) that TL_LOWER_TRACE and TL_LOWER_TRACE_DIR ask for: mode is None (off), "html",
    "terminal" or "both"; directory is None for "terminal"."""
    value = os.environ.get("TL_LOWER_TRACE", "").strip()
    if value.lower() in _OFF:
        return None, None
    mode = _MODES.get(value.lower())
    if mode is None:  # the variable names the directory itself
        return "html", value
    root = os.environ.get("TL_LOWER_TRACE_DIR", "").strip() or DEFAULT_TRACE_DIR
    return mode, (None if mode == "terminal" else root)


def trace_enabled():
    return trace_settings()[0] is not None


# File extension of the final source, per target kind.
_SOURCE_EXT = {"cpu": "cpp", "cuda": "cu", "hip": "hip", "metal": "metal", "opencl": "cl", "webgpu": "wgsl", "ascend": "cpp"}


_FRAGMENT_CALL = 'T.call_intrin("handle", "fragment", '


def _call_end(text, start):
    """The index just past the call whose opening parenthesis is the first one at or after `start`
    (string literals skipped), or -1 when it is not closed on this text."""
    depth, i, n = 0, text.index("(", start), len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def abbreviate_layouts(ir):
    """The IR with each fragment layout value (a T.call_intrin("handle", "fragment", kind, summary, ...) of
    17 arguments, hundreds of characters) shown as its summary, the one `tilelang info` prints:
    layout<mma_C(128x128, warps 2x2)>. For the trace's diffs, which otherwise run off the page; the dump
    files keep the IR exactly."""
    out, pos = [], 0
    while True:
        at = ir.find(_FRAGMENT_CALL, pos)
        if at < 0:
            break
        end = _call_end(ir, at)
        m = re.match(r'"[^"]*", "([^"]*)"', ir[at + len(_FRAGMENT_CALL):])
        if end < 0 or not m:
            out.append(ir[pos:at + len(_FRAGMENT_CALL)])
            pos = at + len(_FRAGMENT_CALL)
            continue
        out.append(ir[pos:at] + f"layout<{m.group(1)}>")
        pos = end
    out.append(ir[pos:])
    return "".join(out)


class PassRecord:
    """One pass of the pipeline: its name, the IR text after it, its time and whether it changed the IR."""

    __slots__ = ("index", "name", "ir", "ms", "changed")

    def __init__(self, index, name, ir, ms, changed):
        self.index, self.name, self.ir, self.ms, self.changed = index, name, ir, float(ms), bool(changed)

    @property
    def file_name(self):
        return f"{self.index:02d}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', self.name)}.txt"

    def __repr__(self):
        status = "changed" if self.changed else "unchanged"
        return f"PassRecord({self.index}, {self.name!r}, {self.ms:.3f} ms, {status})"


class LowerTrace:
    """The result of ir_lower_trace: ``input_ir``, ``passes`` (PassRecord list), ``final_source`` (None when the
    target has no code generator yet), ``source_ext`` and ``out_dir`` (None when nothing was written)."""

    def __init__(self, func_name, kind, input_ir, passes, final_source, arch=""):
        self.func_name, self.kind, self.input_ir, self.arch = func_name, kind, input_ir, arch
        self.passes, self.final_source = passes, final_source
        self.source_ext = _SOURCE_EXT.get(kind, "txt")
        self.out_dir = None

    @property
    def total_ms(self):
        return sum(p.ms for p in self.passes)

    def unchanged(self):
        """Names of the passes that left the IR as it was."""
        return [p.name for p in self.passes if not p.changed]

    @property
    def target_name(self):
        """The kind and the arch the kernel was built for, e.g. "cuda sm_90a" (the kind alone without an arch)."""
        return f"{self.kind} {self.arch}" if self.arch else self.kind

    def summary(self):
        """One line per pass: index, name, time, changed or not."""
        lines = [f"lower trace of '{self.func_name}' for target '{self.target_name}': {len(self.passes)} passes, "
                 f"{self.total_ms:.3f} ms"]
        for p in self.passes:
            lines.append(f"{p.index:02d} {p.name:<32} {p.ms:9.3f} ms  {'changed' if p.changed else '(unchanged)'}")
        return "\n".join(lines)

    def write(self, out_dir):
        """Writes 00_input.txt, NN_<pass>.txt, index.txt, trace.json, final_source.<ext> and index.html."""
        os.makedirs(out_dir, exist_ok=True)
        _write(os.path.join(out_dir, "00_input.txt"), self.input_ir)
        for p in self.passes:
            _write(os.path.join(out_dir, p.file_name), p.ir)
        if self.final_source is not None:
            _write(os.path.join(out_dir, f"final_source.{self.source_ext}"), self.final_source)
        _write(os.path.join(out_dir, "index.txt"), self.summary() + "\n")
        meta = {"func": self.func_name, "target": self.kind, "arch": self.arch, "total_ms": self.total_ms,
                "final_source": f"final_source.{self.source_ext}" if self.final_source is not None else None,
                "passes": [{"index": p.index, "name": p.name, "file": p.file_name, "ms": p.ms, "changed": p.changed}
                           for p in self.passes]}
        _write(os.path.join(out_dir, "trace.json"), json.dumps(meta, indent=1) + "\n")
        _write(os.path.join(out_dir, "index.html"), self.to_html())
        self.out_dir = out_dir
        return out_dir

    def to_html(self, context_lines=3):
        """A self-contained page (no scripts, no network): a table of passes and each pass's diff."""
        esc = html.escape
        differ = difflib.HtmlDiff(tabsize=4, wrapcolumn=100)
        rows, sections = [], []
        prev_name, prev = "input", abbreviate_layouts(self.input_ir).splitlines()
        for p in self.passes:
            anchor = f"pass{p.index}"
            status = "changed" if p.changed else "unchanged"
            rows.append(f'<tr class="{status}"><td>{p.index:02d}</td><td><a href="#{anchor}">{esc(p.name)}</a></td>'
                        f'<td class="num">{p.ms:.3f}</td><td>{status}</td>'
                        f'<td><a href="{esc(p.file_name)}">{esc(p.file_name)}</a></td></tr>')
            cur = abbreviate_layouts(p.ir).splitlines()
            if cur == prev:
                body = "<p class=\"note\">IR unchanged by this pass.</p>"
            else:
                body = differ.make_table(prev, cur, fromdesc=esc(prev_name), todesc=esc(f"after {p.name}"),
                                         context=True, numlines=context_lines)
            sections.append(f'<h2 id="{anchor}">{p.index:02d} {esc(p.name)} <small>{p.ms:.3f} ms, {status}'
                            f'</small></h2>\n{body}')
            prev_name, prev = f"after {p.name}", cur
        src = ""
        if self.final_source is not None:
            name = f"final_source.{self.source_ext}"
            src = (f'<h2 id="source">Final source (<a href="{name}">{name}</a>)</h2>\n'
                   f'<pre>{esc(self.final_source)}</pre>')
        return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>lower trace: {esc(self.func_name)} ({esc(self.target_name)})</title>
<style>
body {{ font-family: sans-serif; margin: 1em 2em; }}
table.passes td, table.passes th {{ padding: 2px 10px; text-align: left; }}
table.passes tr.unchanged {{ color: #888; }}
td.num {{ text-align: right; font-family: monospace; }}
table.diff {{ font-family: monospace; font-size: 12px; border: 1px solid #ccc; border-collapse: collapse; }}
table.diff td {{ padding: 0 4px; vertical-align: top; white-space: pre-wrap; }}
.diff_header {{ background: #e0e0e0; }} td.diff_header {{ text-align: right; }}
.diff_next {{ background: #c0c0c0; }}
.diff_add {{ background: #aaffaa; }} .diff_chg {{ background: #ffff77; }} .diff_sub {{ background: #ffaaaa; }}
pre {{ background: #f6f6f6; padding: 8px; font-size: 12px; }}
p.note {{ color: #888; }}
</style></head><body>
<h1>Lower trace of <code>{esc(self.func_name)}</code> for target <code>{esc(self.target_name)}</code></h1>
<p>{len(self.passes)} passes, {self.total_ms:.3f} ms in all; input IR: <a href="00_input.txt">00_input.txt</a>.
Passes that changed nothing are greyed out. In the diffs a layout value shows as its summary,
<code>layout&lt;mma_C(128x128, warps 2x2)&gt;</code> (as <code>tilelang info</code> prints it); the dump files hold the full IR.</p>
<table class="passes"><tr><th>#</th><th>pass</th><th>ms</th><th>IR</th><th>dump</th></tr>
{chr(10).join(rows)}
</table>
{chr(10).join(sections)}
{src}
</body></html>
"""


def _write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def available_targets():
    """Target kinds whose pipeline can be traced in this build: every registered backend."""
    return list(_ffi.backend_kinds())


def _config_strings(pass_configs):
    from ..transform import normalize_pass_configs

    return {k: ("1" if v is True else "0" if v is False else str(v))
            for k, v in normalize_pass_configs(pass_configs).items()}


def _trace_of(func, compiled):
    passes = [PassRecord(i + 1, name, _ffi.print_func(ir), ms, changed)
              for i, (name, ir, ms, changed) in enumerate(compiled.trace)]
    return LowerTrace(func.name, compiled.target.kind, _ffi.print_func(func), passes, compiled.source,
                      arch=compiled.target.arch or "")


def _print_to_terminal(trace, stream=None):
    """The "terminal" mode: the pass summary, then a unified diff of each pass that changed the IR."""
    stream = stream or sys.stderr
    out = [trace.summary()]
    prev_name, prev = "input", abbreviate_layouts(trace.input_ir).splitlines()
    for p in trace.passes:
        cur = abbreviate_layouts(p.ir).splitlines()
        if cur != prev:
            out.append(f"--- {p.index:02d} {p.name}")
            out.extend(difflib.unified_diff(prev, cur, prev_name, f"after {p.name}", n=2, lineterm=""))
        prev_name, prev = f"after {p.name}", cur
    stream.write("\n".join(out) + "\n")


def trace_folder_name(func_name, target, key):
    """<function>_<kind>_<arch>_<hash of key>: kernels built for sm_80 and sm_90a are told apart by name."""
    parts = [func_name, target.kind] + ([target.arch] if target.arch else [])
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "_".join(parts)) + "_" + digest


def ir_lower_trace(func, target="cpu", out_dir=None, pass_configs=None):
    """Lowers ``func`` for ``target`` pass by pass. Returns a LowerTrace; with ``out_dir`` also writes the
    per-pass IR (NN_<pass>.txt), index.txt (times, unchanged passes), trace.json, final_source.<ext> and
    index.html (each pass's diff against the IR before it)."""
    if not isinstance(func, _ffi.PrimFunc):
        raise TileLangTypeError(f"ir_lower_trace expects a @T.prim_func, got {type(func).__name__}")
    t = _target.Target(target)
    if t.kind not in available_targets():
        raise TileLangUnsupportedError(f"target '{t.kind}' has no backend in this build; the lower trace is available "
                                       f"for: {', '.join(available_targets())}")
    compiled = _ffi.compile(func, str(t), _config_strings(pass_configs), "", True, "", False, True)
    trace = _trace_of(func, compiled)
    if out_dir is not None:
        trace.write(out_dir)
    return trace


def trace_from_env(func, target, pass_configs=None, build_binary=True):
    """The TL_LOWER_TRACE hook of JITKernel: compiles ``func`` (the JIT's compile, with the trace on) and, as
    trace_settings() asks, writes the trace to <dir>/<func>_<kind>_<arch>_<hash of the input IR, target and
    configs>/ and/or prints it to stderr. Returns the compiled kernel, or None when tracing is off or the
    compile failed: the failure is written to error.txt (or stderr) and the JIT then compiles again to raise
    its own error. ``pass_configs`` are strings."""
    mode, root = trace_settings()
    if mode is None:
        return None
    from ..jit.headers import include_dir

    t = _target.Target(target)
    text = _ffi.print_func(func)
    # one directory per (input IR, target, configs): each differently built kernel keeps its trace
    key = text + "\n" + str(t) + "\n" + repr(sorted((pass_configs or {}).items()))
    out = os.path.join(root, trace_folder_name(func.name, t, key)) if root is not None else None
    try:
        compiled = _ffi.compile(func, str(t), dict(pass_configs or {}), include_dir(), True, "", build_binary, True)
    except Exception as e:  # noqa: BLE001 -- recorded for the user, then the compile raises its own error
        if out is not None:
            os.makedirs(out, exist_ok=True)
            _write(os.path.join(out, "00_input.txt"), text)
            _write(os.path.join(out, "error.txt"), f"{type(e).__name__}: {e}\n")
        if mode != "html":
            from ..log import logger

            logger.warning("lower trace of '%s': the compile failed: %s: %s", func.name, type(e).__name__, e)
        return None
    trace = _trace_of(func, compiled)
    if out is not None:
        trace.write(out)
    if mode != "html":
        _print_to_terminal(trace)
    return compiled
