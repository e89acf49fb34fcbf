"""The TileLang language server (LSP over stdio, built on pygls).

On open and save of a Python file it has the file analysed in a worker process (tilelang.lsp.worker:
the file runs there, never here) and publishes what the compiler found: errors and performance warnings
as diagnostics at the user's line and column; inlay hints with each allocation's shape, dtype, scope,
bytes and layout, each pipeline's stages, each tile op's lowering and each kernel's resources; hovers
with the full decision text; a "lower trace" code lens per kernel.

Results are cached by a hash of the file's text and the settings, so saving an unchanged file does not
run the compiler again. Settings (initializationOptions or workspace/didChangeConfiguration, either flat
or under "tilelang"): target (default "cuda -arch=sm_80"; "cpu" and other cuda archs work), timeout
(seconds per analysis, default 60), traceDir (where lower traces go; default a folder in the temp dir).
The custom request "tilelang/stats" returns counters (how many analyses ran, how many were cache hits).
"""
import asyncio
import collections
import difflib
import hashlib
import logging
import os
import sys
import tempfile
import time

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .worker import DEFAULT_TIMEOUT_S, WorkerError, WorkerPool

DEFAULT_TARGET = "cuda -arch=sm_80"
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "information": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}
_CACHE_ENTRIES = 64


def _range(r):
    return types.Range(start=types.Position(line=r[0][0], character=r[0][1]),
                       end=types.Position(line=r[1][0], character=r[1][1]))


def _line_map(old, new):
    """{old line index: new line index} for the lines an edit left unchanged (so hints follow the code
    while the file is edited and not yet saved)."""
    if old == new:
        return None
    out = {}
    for a, b, n in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        for i in range(n):
            out[a + i] = b + i
    return out


class TileLangServer(LanguageServer):
    def __init__(self):
        super().__init__("tilelang-lsp", "0.1.0")
        self.settings = {"target": DEFAULT_TARGET, "timeout": DEFAULT_TIMEOUT_S, "traceDir": None}
        self.pool = WorkerPool()
        self.cache = collections.OrderedDict()  # content key -> analysis result
        self.results = {}  # uri -> (text, result) last published
        self.tasks = {}  # uri -> (key, asyncio.Task)
        self.stats = {"analyses": 0, "cache_hits": 0, "worker_errors": 0, "last_ms": None}

    # ---- settings --------------------------------------------------------------------------------
    def apply_settings(self, options):
        """Takes the settings given; returns the names of those that changed."""
        if not isinstance(options, dict):
            return set()
        if isinstance(options.get("tilelang"), dict):
            options = options["tilelang"]
        changed = set()
        for k in ("target", "timeout", "traceDir"):
            if k in options and options[k] is not None and options[k] != self.settings[k]:
                self.settings[k] = float(options[k]) if k == "timeout" else str(options[k])
                changed.add(k)
        return changed

    def trace_dir(self):
        return self.settings["traceDir"] or os.path.join(tempfile.gettempdir(), "tilelang-lsp-traces")

    # ---- analysis -------------------------------------------------------------------------------------
    def key(self, path, text):
        h = hashlib.sha256()
        for part in (path, self.settings["target"], text):
            h.update(part.encode("utf-8", errors="surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()

    async def analyze(self, uri):
        """Analyses the document (or takes the cached result of the same text) and publishes it."""
        doc = self.workspace.get_text_document(uri)
        text, path = doc.source, doc.path
        if "tilelang" not in text:  # not a kernel file: do not run it
            self.publish(uri, text, {"diagnostics": [], "hints": [], "hovers": [], "lenses": [], "kernels": []})
            return
        key = self.key(path, text)
        if key in self.cache:
            self.cache.move_to_end(key)
            self.stats["cache_hits"] += 1
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Log, message=f"tilelang: {path} unchanged since its last analysis; "
                                                    "using the cached result"))
            self.publish(uri, text, self.cache[key])
            return
        running = self.tasks.get(uri)
        if running is not None and running[0] == key and not running[1].done():
            await running[1]
            return
        if running is not None and not running[1].done():
            running[1].cancel()
        task = asyncio.ensure_future(self._run(uri, path, text, key))
        self.tasks[uri] = (key, task)
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise

    async def _run(self, uri, path, text, key):
        job = {"op": "analyze", "path": path, "text": text, "target": self.settings["target"]}
        t0 = time.perf_counter()
        self.stats["analyses"] += 1
        try:
            result = await self.pool.run(job, self.settings["timeout"])
        except WorkerError as e:
            self.stats["worker_errors"] += 1
            result = {"diagnostics": [{"range": [[0, 0], [0, 0]], "severity": "error", "message": str(e),
                                       "code": "TileLangWorkerError", "related": []}],
                      "hints": [], "hovers": [], "lenses": [], "kernels": []}
        else:
            if "error" in result and "diagnostics" not in result:
                result = {"diagnostics": [{"range": [[0, 0], [0, 0]], "severity": "error",
                                           "message": result["error"], "code": "TileLangWorkerError",
                                           "related": []}], "hints": [], "hovers": [], "lenses": [], "kernels": []}
            else:
                self.cache[key] = result
                while len(self.cache) > _CACHE_ENTRIES:
                    self.cache.popitem(last=False)
        ms = (time.perf_counter() - t0) * 1e3
        self.stats["last_ms"] = ms
        self.window_log_message(types.LogMessageParams(
            type=types.MessageType.Log,
            message=f"tilelang: analysed {path} for '{self.settings['target']}' in {ms:.0f} ms "
                    f"({len(result.get('kernels', []))} kernel(s), {len(result['diagnostics'])} diagnostic(s))"))
        self.publish(uri, text, result)

    async def settled(self, uri):
        """Waits for the analysis of a document that is in flight, so a hint request right after a save
        gets the new hints."""
        running = self.tasks.get(uri)
        if running is not None and not running[1].done():
            try:
                await asyncio.shield(running[1])
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 -- the newer task publishes
                pass

    def publish(self, uri, text, result):
        self.results[uri] = (text, result)
        diags = []
        for d in result["diagnostics"]:
            related = [types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=_range(r["range"])),
                                                          message=r["message"]) for r in d.get("related", [])]
            diags.append(types.Diagnostic(range=_range(d["range"]), message=d["message"],
                                          severity=_SEVERITY.get(d["severity"], types.DiagnosticSeverity.Error),
                                          source="tilelang", code=d.get("code"),
                                          related_information=related or None))
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags))
        ws = self.client_capabilities.workspace
        if ws is not None and ws.inlay_hint is not None and ws.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)
        if ws is not None and ws.code_lens is not None and ws.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def current(self, uri):
        """(result, map of analysed line -> current line or None when the text is the same)."""
        if uri not in self.results:
            return None, None
        text, result = self.results[uri]
        try:
            now = self.workspace.get_text_document(uri).source
        except Exception:  # noqa: BLE001
            return result, None
        if now == text:
            return result, None
        return result, _line_map(text.splitlines(), now.splitlines())


def _moved(line, mapping):
    if mapping is None:
        return line
    return mapping.get(line)


server = TileLangServer()


@server.feature(types.INITIALIZE)
def on_initialize(ls: TileLangServer, params: types.InitializeParams):
    ls.apply_settings(params.initialization_options or {})


@server.feature(types.INITIALIZED)
async def on_initialized(ls: TileLangServer, params: types.InitializedParams):
    await ls.pool.warm()


@server.feature(types.SHUTDOWN)
async def on_shutdown(ls: TileLangServer, params):
    await ls.pool.close()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(ls: TileLangServer, params: types.DidChangeConfigurationParams):
    if "target" in ls.apply_settings(params.settings or {}):  # the other settings need no new analysis
        for uri in list(ls.results):
            await ls.analyze(uri)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def on_open(ls: TileLangServer, params: types.DidOpenTextDocumentParams):
    if params.text_document.uri.endswith(".py"):
        await ls.analyze(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
async def on_save(ls: TileLangServer, params: types.DidSaveTextDocumentParams):
    if params.text_document.uri.endswith(".py"):
        await ls.analyze(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: TileLangServer, params: types.DidCloseTextDocumentParams):
    uri = params.text_document.uri
    ls.results.pop(uri, None)
    running = ls.tasks.pop(uri, None)
    if running is not None and not running[1].done():
        running[1].cancel()
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
async def on_inlay_hint(ls: TileLangServer, params: types.InlayHintParams):
    uri = params.text_document.uri
    await ls.settled(uri)
    result, mapping = ls.current(uri)
    if result is None:
        return []
    lo, hi = params.range.start.line, params.range.end.line
    hints = []
    for h in result["hints"]:
        line = _moved(h["position"][0], mapping)
        if line is None or not lo <= line <= hi:
            continue
        hints.append(types.InlayHint(
            position=types.Position(line=line, character=h["position"][1]), label=h["label"],
            kind=types.InlayHintKind.Type if h["kind"] == "type" else None, padding_left=True))
    return hints


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: TileLangServer, params: types.HoverParams):
    uri = params.text_document.uri
    await ls.settled(uri)
    result, mapping = ls.current(uri)
    if result is None:
        return None
    parts, rng = [], None
    for h in result["hovers"]:
        line = _moved(h["range"][0][0], mapping)
        if line == params.position.line:
            parts.append(h["markdown"])
            if rng is None:
                r = h["range"]
                rng = [[line, r[0][1]], [line + r[1][0] - r[0][0], r[1][1]]]
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                       range=_range(rng))


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
async def on_code_lens(ls: TileLangServer, params: types.CodeLensParams):
    uri = params.text_document.uri
    await ls.settled(uri)
    result, mapping = ls.current(uri)
    if result is None:
        return []
    lenses = []
    for lens in result["lenses"]:
        line = _moved(lens["range"][0][0], mapping)
        if line is None:
            continue
        r = lens["range"]
        lenses.append(types.CodeLens(range=_range([[line, r[0][1]], [line, r[1][1]]]),
                                     command=types.Command(title="lower trace", command="tilelang.lowerTrace",
                                                           arguments=[uri, lens["kernel"]])))
    return lenses


@server.command("tilelang.lowerTrace")
async def lower_trace(ls: TileLangServer, *args):
    """Arguments: the document URI and the kernel's name. Writes the HTML lower trace and returns the path
    of its index.html."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if len(args) != 2:
        raise ValueError("tilelang.lowerTrace takes (document uri, kernel name)")
    uri, kernel = str(args[0]), str(args[1])
    doc = ls.workspace.get_text_document(uri)
    digest = hashlib.sha256(doc.path.encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in kernel)
    out_dir = os.path.join(ls.trace_dir(), f"{os.path.splitext(os.path.basename(doc.path))[0]}_{digest}", safe)
    job = {"op": "trace", "path": doc.path, "text": doc.source, "kernel": kernel, "target": ls.settings["target"],
           "out_dir": out_dir}
    try:
        answer = await ls.pool.run(job, ls.settings["timeout"])
    except WorkerError as e:
        answer = {"error": str(e)}
    if "error" in answer:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=answer["error"]))
        raise ValueError(answer["error"])
    ls.window_show_message(types.ShowMessageParams(
        type=types.MessageType.Info, message=f"lower trace of '{kernel}' written to {answer['index']}"))
    return answer["index"]


@server.feature("tilelang/stats")
def on_stats(ls: TileLangServer, params):
    return dict(ls.stats, worker_jobs=ls.pool.jobs, target=ls.settings["target"])


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="tilelang-lsp", description="The TileLang language server (LSP over stdio).")
    parser.add_argument("--target", help=f"compile for this target (default {DEFAULT_TARGET!r})")
    parser.add_argument("--timeout", type=float, help=f"seconds per analysis (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--log-file", help="write the server's log here")
    args = parser.parse_args(argv)
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)
    server.apply_settings({"target": args.target, "timeout": args.timeout})
    server.start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
