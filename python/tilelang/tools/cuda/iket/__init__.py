"""tilelang.tools.cuda.iket: TileLang's intra-kernel event tracing (IKET: marks and ranges a kernel records
with the GPU's global timer, written to trace files by its `iket` profiler CLI).

TileLang-C++ does not emit IKET events. The names exist so that programs using them load and their kernels
compile and run: `iket.mark(...)`, `with iket.range(...)`, `iket.range_push / range_pop / range_start /
range_end` and `iket.payload(...)` record the event in `event_table()` while the kernel is parsed and emit
nothing into it; the first use warns once that no trace is produced. `session(...)`, `output_dir()`,
`output_path(...)`, `trace_files()` describe an output directory that stays empty, and `cli` refuses to run
(a TileLangUnsupportedError)."""
import os
from pathlib import Path

from ....errors import TileLangUnsupportedError

_events = []  # {"id", "name", "kind"} in first-use order
_ranges = []
_warned = [False]
_output_dir = [None]


def _note(name, kind):
    if not _warned[0]:
        from ....log import warn

        warn("tilelang.tools.cuda.iket: TileLang-C++ does not emit IKET trace events; the marks and ranges are "
             "recorded in iket.event_table() but the kernel runs without them and no trace file is written")
        _warned[0] = True
    for e in _events:
        if e["name"] == name and e["kind"] == kind:
            return
    _events.append({"id": len(_events), "name": str(name), "kind": kind})


class PayloadSpec:
    def __init__(self, expr, dtype=None):
        self.expr, self.dtype = expr, dtype


def payload(expr, dtype=None):
    return PayloadSpec(expr, dtype)


def mark(name, payload=None):
    _note(name, "mark")


def range_push(name, payload=None):
    _note(name, "range")
    _ranges.append(name)


def range_pop(name=None):
    if not _ranges:
        raise ValueError("iket.range_pop without a range_push")
    top = _ranges.pop()
    if name is not None and name != top:
        raise ValueError(f"iket.range_pop({name!r}) closes the range {top!r}")


range_start = range_push
range_end = range_pop


class _RangeScope:
    parse_time_context = True  # entered while the kernel is parsed (language/parser_control.py)

    def __init__(self, name, payload=None):
        self.name, self.payload = name, payload

    def __enter__(self):
        range_push(self.name, self.payload)
        return self

    def __exit__(self, *exc):
        range_pop(self.name)
        return False


def range(name, payload=None):  # noqa: A001 -- TileLang's name
    return _RangeScope(name, payload)


def reset():
    _events.clear()
    _ranges.clear()


def event_table():
    return [dict(e) for e in _events]


def runtime_payloads_enabled():
    return False


def set_output_dir(path):
    _output_dir[0] = None if path is None else Path(path)
    return _output_dir[0]


def output_dir(default=None):
    d = _output_dir[0] or os.environ.get("IKET_OUTPUT_DIR") or default
    return None if d is None else Path(d)


def output_path(name, *, directory=None):
    d = Path(directory) if directory is not None else (output_dir() or Path("."))
    return d / name


def trace_files(*, directory=None):
    return []


class session:  # noqa: N801 -- TileLang's name
    """`with iket.session(...)`: a tracing session; nothing is traced here (see the module docstring)."""

    def __init__(self, output_dir=None, runtime_payloads=False, **kwargs):
        self.dir, self.runtime_payloads, self.kwargs = output_dir, runtime_payloads, kwargs
        self._saved = None

    def __enter__(self):
        self._saved = _output_dir[0]
        if self.dir is not None:
            set_output_dir(self.dir)
        return self

    def __exit__(self, *exc):
        _output_dir[0] = self._saved
        return False


class _Cli:
    def __getattr__(self, name):
        raise TileLangUnsupportedError("the IKET profiler CLI (tilelang.tools.cuda.iket.cli) is not supported by "
                                       "TileLang-C++: it records no IKET events")


cli = _Cli()
