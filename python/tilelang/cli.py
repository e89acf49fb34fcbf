"""The `tilelang` command line.

    tilelang check FILE... [--target T] [--hints]   compile every kernel of each file; print diagnostics as
                                                   file:line:col: error|warning|note: message (exit 1 on errors)
    tilelang trace FILE[::KERNEL] [--target T] [--out DIR]   write the lower trace (HTML diffs per pass)
    tilelang info FILE[::KERNEL] [--target T]       shared-memory table, resources, layouts and decisions
    tilelang lsp [--target T]                       the language server (LSP over stdio)

The files run in a worker process with a time limit (--timeout), as in the language server. The target may
be typed unquoted: `--target cuda -arch=sm_90a` is `--target "cuda -arch=sm_90a"`. Which kernels a file has
(eager and autotuned @tilelang.jit functions included) is tilelang.lsp.discover's part.
"""
import argparse
import io
import os
import re
import sys
import tokenize

from .lsp.worker import DEFAULT_TIMEOUT_S, WorkerError, run_job

DEFAULT_TARGET = "cuda -arch=sm_80"
_LABEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


class NotSourceText(Exception):
    """A file whose bytes are not text in its declared encoding (UTF-8 unless a PEP 263 comment says
    otherwise); the message is a diagnostic `file:line:col: error: ...`."""


def _read(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SystemExit(f"tilelang: cannot read {path}: {e.strerror}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:  # an unknown encoding in a coding comment, or a BOM that contradicts it
        raise NotSourceText(f"{path}:1:1: error: {e}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise NotSourceText(f"{path}:{line}:{col}: error: the file is not {encoding} text (byte 0x{data[e.start]:02x} "
                            f"cannot start a character there); Python reads source files as UTF-8 unless a coding "
                            f"comment names another encoding: save it as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")  # as text mode reads it


def _split_spec(spec):
    path, sep, kernel = spec.rpartition("::")
    return (path, kernel) if sep else (spec, None)


def _analyze(path, target, timeout):
    return run_job({"op": "analyze", "path": os.path.abspath(path), "text": _read(path), "target": target},
                   timeout)


def _print_diag(shown, d, out):
    label = _LABEL.get(d["severity"], d["severity"])
    first, *rest = d["message"].split("\n")
    print(f"{shown}:{d['lineno']}:{d['colno']}: {label}: {first}", file=out)
    for line in rest:
        print(f"    {line}", file=out)


def cmd_check(args):
    failed = False
    for path in args.files:
        try:
            result = _analyze(path, args.target, args.timeout)
        except NotSourceText as e:
            print(e)
            failed = True
            continue
        except WorkerError as e:
            print(f"{path}:1:1: error: {e}")
            failed = True
            continue
        if "diagnostics" not in result:
            print(f"{path}:1:1: error: {result.get('error', 'no answer from the worker')}")
            failed = True
            continue
        for d in result["diagnostics"]:
            _print_diag(path, d, sys.stdout)
        if args.hints:
            for h in result["hints"]:
                print(f"{path}:{h['position'][0] + 1}: hint: {h['label']}")
        counts = {s: sum(d["severity"] == s for d in result["diagnostics"]) for s in ("error", "warning")}
        ok = sum(k["ok"] for k in result["kernels"])
        print(f"{path}: {ok} of {len(result['kernels'])} kernel(s) compiled for '{args.target}'; "
              f"{counts['error']} error(s), {counts['warning']} warning(s)")
        failed |= counts["error"] > 0
    return 1 if failed else 0


def cmd_trace(args):
    path, kernel = _split_spec(args.spec)
    out = os.path.abspath(args.out or os.path.join("tilelang-trace", kernel or os.path.splitext(os.path.basename(path))[0]))
    try:
        answer = run_job({"op": "trace", "path": os.path.abspath(path), "text": _read(path), "kernel": kernel,
                          "target": args.target, "out_dir": out}, args.timeout)
    except WorkerError as e:
        print(f"tilelang trace: {e}", file=sys.stderr)
        return 1
    if "error" in answer:
        print(f"tilelang trace: {answer['error']}", file=sys.stderr)
        return 1
    print(answer["summary"])
    print(f"written to {answer['index']}")
    return 0


def cmd_info(args):
    path, kernel = _split_spec(args.spec)
    try:
        result = _analyze(path, args.target, args.timeout)
    except WorkerError as e:
        print(f"tilelang info: {e}", file=sys.stderr)
        return 1
    if "kernels" not in result:
        print(f"tilelang info: {result.get('error')}", file=sys.stderr)
        return 1
    kernels = result["kernels"]
    match = [k for k in kernels if kernel in (k["label"], k["name"])] if kernel else kernels[:1] if len(kernels) == 1 else []
    if not match:
        names = ", ".join(dict.fromkeys(k["label"] for k in kernels)) or "none"
        which = f"no kernel named '{kernel}'" if kernel else "no kernel" if not kernels else \
            "more than one kernel; name one with FILE::KERNEL"
        print(f"tilelang info: {which} in {path} (kernels: {names})", file=sys.stderr)
        for d in result["diagnostics"]:
            if d["severity"] == "error":
                _print_diag(path, d, sys.stderr)
        return 1
    k = match[0]
    print(f"kernel '{k['name']}' ({path}:{k['def_line']}) for '{args.target}'")
    if not k["ok"]:
        for d in result["diagnostics"]:
            if d["severity"] == "error":
                _print_diag(path, d, sys.stdout)
        return 1
    if k.get("kind") != "cuda":
        print(f"target '{k.get('kind')}': compiled; shared-memory table, resources, layouts and decisions are "
              "reported for CUDA targets")
        return 0
    r = k["resources"]
    print(f"resources ({k['compiler']}, {k['arch']}): {k['threads']} threads, {r.get('registers', 0)} registers/thread, "
          f"{r.get('shared_bytes', 0)} B dynamic + {r.get('static_shared_bytes', 0)} B static shared memory, "
          f"spills {r.get('spill_stores', 0)} B stored / {r.get('spill_loads', 0)} B loaded, "
          f"{r.get('stack_bytes', 0)} B stack")
    print("\nshared memory:")
    print(k["smem_report"].rstrip())
    print("\nlayouts:")
    for name, layout in sorted(k["layouts"].items()):
        print(f"  {name}: {layout}")
    if not k["layouts"]:
        print("  (none)")
    prefix = result["path"] + ":"
    print("\ndecisions:")
    for c in k["choices"]:
        print(f"  {path}:{c[len(prefix):]}" if c.startswith(prefix) else f"  {c}")
    if k["warnings"]:
        print("\nwarnings:")
        for w in k["warnings"]:
            print(f"  {path}:{w[len(prefix):]}" if w.startswith(prefix) else f"  {w}")
    return 0


def cmd_lsp(args):
    from .lsp import main as lsp_main

    argv = []
    if args.target:
        argv += ["--target", args.target]
    if args.timeout:
        argv += ["--timeout", str(args.timeout)]
    return lsp_main(argv)


def build_parser():
    p = argparse.ArgumentParser(prog="tilelang", description="TileLang-C++ command line tools")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp, target_default=DEFAULT_TARGET):
        sp.add_argument("--target", default=target_default,
                        help=f"target to compile for (default {DEFAULT_TARGET!r}; e.g. 'cpu', 'cuda -arch=sm_86')")
        sp.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds allowed per file (default {DEFAULT_TIMEOUT_S:g})")

    c = sub.add_parser("check", help="compile every kernel of the files and print diagnostics")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--hints", action="store_true", help="also print the inlay hints (file:line: hint: ...)")
    common(c)
    c.set_defaults(fn=cmd_check)
    t = sub.add_parser("trace", help="write the lower trace of a kernel (HTML with per-pass diffs)")
    t.add_argument("spec", metavar="FILE[::KERNEL]")
    t.add_argument("--out", help="output folder (default ./tilelang-trace/<kernel>)")
    common(t)
    t.set_defaults(fn=cmd_trace)
    i = sub.add_parser("info", help="shared-memory table, resources, layouts and decisions of a kernel")
    i.add_argument("spec", metavar="FILE[::KERNEL]")
    common(i)
    i.set_defaults(fn=cmd_info)
    s = sub.add_parser("lsp", help="start the language server (LSP over stdio)")
    s.add_argument("--target", default=None, help=f"default {DEFAULT_TARGET!r}; the client's settings override it")
    s.add_argument("--timeout", type=float, default=None)
    s.set_defaults(fn=cmd_lsp)
    return p


def join_target_options(argv):
    """`--target cuda -arch=sm_90a` typed unquoted: the single-dash words after the target belong to it, as
    in `--target "cuda -arch=sm_90a"`; `-arch sm_90a` (two words) is read as `-arch=sm_90a`."""
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--target" and i + 1 < len(argv):
            parts, i = [argv[i + 1]], i + 2
        elif word.startswith("--target="):
            parts, i = [word[len("--target="):]], i + 1
        else:
            out.append(word)
            i += 1
            continue
        while i < len(argv) and re.match(r"-[A-Za-z]", argv[i]):
            parts.append(argv[i])
            i += 1
            if "=" not in parts[-1] and i < len(argv) and not argv[i].startswith("-") \
                    and not argv[i].endswith(".py") and "::" not in argv[i]:
                parts[-1] += "=" + argv[i]
                i += 1
        out += ["--target", " ".join(parts)]
    return out


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(join_target_options(argv))
    try:
        return args.fn(args)
    except NotSourceText as e:  # tilelang trace / info of such a file
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
