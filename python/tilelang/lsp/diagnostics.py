"""Diagnostics in the editor's form (LSP ranges, severities, related lines) and the conversion of an exception
into one. Shared by tilelang.lsp.analysis (compiling a file's kernels) and tilelang.lsp.discover (finding
them), which both report through it."""
import os
import re

from ..errors import TileLangError

_CARET = re.compile(r"\s*\^+\s*")


def _diag(doc, start, end, severity, message, code=None, lineno=None, colno=None, related=()):
    return {"range": [start, end], "severity": severity, "message": message, "code": code,
            "lineno": lineno if lineno is not None else start[0] + 1,
            "colno": colno if colno is not None else start[1] + 1, "related": list(related)}


def error_message(err):
    """An error's message without its 'file:line:col: ' prefix and without the quoted line and caret
    (the editor shows the place itself)."""
    lines = str(err).rstrip().split("\n")
    if len(lines) >= 2 and _CARET.fullmatch(lines[-1]):
        lines = lines[:-2]
    span = getattr(err, "span", None)
    if span is not None and lines:
        prefix = f"{span[0]}:{span[1]}:{span[2]}: "
        if lines[0].startswith(prefix):
            lines[0] = lines[0][len(prefix):]
    return "\n".join(lines).rstrip()


def _related(doc, message, own_line):
    """Other lines of this file that an error message names (e.g. the op a layout conflict is against)."""
    out, seen = [], {own_line}
    for m in re.finditer(re.escape(doc.path) + r":(\d+)", message):
        line = int(m.group(1))
        if line not in seen and 1 <= line <= len(doc.lines):
            seen.add(line)
            start, end = doc.range_at_line(line)
            out.append({"range": [start, end], "message": "named by this error"})
    return out


def error_diagnostic(doc, err, fallback_node=None, severity="error"):
    """A diagnostic for an exception: at its span when that is in this file, else at fallback_node."""
    span = getattr(err, "span", None)
    message = error_message(err) if isinstance(err, TileLangError) else f"{type(err).__name__}: {err}"
    code = type(err).__name__
    if span is not None and os.path.abspath(span[0]) == doc.path and 1 <= span[1] <= len(doc.lines):
        start, end = doc.range_at(span[1], span[2])
        related = _related(doc, str(err), span[1])
        message = re.sub(re.escape(doc.path) + r":(\d+)", r"line \1", message)
        return _diag(doc, start, end, severity, message, code, span[1], span[2], related)
    if span is not None:
        message = f"{message} (at {span[0]}:{span[1]}:{span[2]})"
    if fallback_node is not None:
        start, end = doc.stmt_range(fallback_node)
        return _diag(doc, start, end, severity, message, code, fallback_node.lineno, fallback_node.col_offset + 1)
    return _diag(doc, [0, 0], [0, 0], severity, message, code)
