"""Language-server latency: time from didSave to the inlay hints of the reference GEMM (examples/
gemm_cpu_demo.py's kernel) arriving at the client, for target cuda sm_80.

Rows: the first open (empty kernel cache: the file runs in a worker, NVRTC compiles the kernel); a save of
an edited file after a 0.5 s pause (new text: the worker started ahead runs the file, the kernel comes from
the disk cache); the same with no pause (the worker started ahead is still importing tilelang); a save with
no change (the server's content-hash cache; no worker). Medians over --repeat saves.

    python benchmarks/bench_lsp.py [--repeat 7] [--target "cuda -arch=sm_80"]
"""
import argparse
import asyncio
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = pathlib.Path(__file__).resolve().parents[1]


def reference_gemm_source():
    text = (ROOT / "examples" / "gemm_cpu_demo.py").read_text()
    return text[:text.index("\n\ndef main")] + "\n"


class Client(LanguageClient):
    def __init__(self):
        super().__init__("bench-lsp", "0")
        self.published = asyncio.Queue()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diags(params):
            self.published.put_nowait(params)

        for method in (types.WORKSPACE_INLAY_HINT_REFRESH, types.WORKSPACE_CODE_LENS_REFRESH,
                       types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE):
            self.feature(method)(lambda *a: None)


async def hints_after(client, uri, send):
    """ms from send() (a didOpen / didSave) to the diagnostics and then the hints being back."""
    t0 = time.perf_counter()
    send()
    await client.published.get()
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=10_000, character=0))))
    ms = (time.perf_counter() - t0) * 1e3
    assert any(h.label.startswith("mma.sync") for h in hints), [h.label for h in hints]
    return ms, len(hints)


async def run(args):
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    env = dict(os.environ, TILELANG_CACHE_DIR=str(work / "cache"))
    env.pop("TILELANG_DISABLE_CACHE", None)
    path = work / "gemm.py"
    text = reference_gemm_source()
    path.write_text(text)
    uri = path.as_uri()
    client = Client()
    await client.start_io(sys.executable, "-m", "tilelang", "lsp", env=env)
    caps = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
        inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True)))
    await client.initialize_async(types.InitializeParams(capabilities=caps,
                                                         initialization_options={"target": args.target}))
    client.initialized(types.InitializedParams())
    await asyncio.sleep(1.0)  # let the server start its first worker, as it does while an editor opens
    rows = []
    cold, n = await hints_after(client, uri, lambda: client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))))
    rows.append(("open, empty kernel cache (cold)", [cold], n))

    version = 1
    for pause, name in ((0.5, "save after an edit (worker, kernel from disk cache)"),
                        (0.0, "save right after the previous save (spare worker still starting)")):
        edited = []
        for i in range(args.repeat):
            version += 1
            text = text + f"# edit {version}\n"
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
            await asyncio.sleep(pause)  # typing pause; the spare worker imports tilelang meanwhile
            ms, n = await hints_after(client, uri, lambda: client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))))
            edited.append(ms)
        rows.append((name, edited, n))

    same = []
    for _ in range(args.repeat):
        ms, n = await hints_after(client, uri, lambda: client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))))
        same.append(ms)
    rows.append(("save without a change (content-hash cache)", same, n))
    stats = await client.protocol.send_request_async("tilelang/stats", {})
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    shutil.rmtree(work, ignore_errors=True)

    print(f"reference GEMM (128x128x32, 2 stages), target '{args.target}', medians of {args.repeat}; "
          f"{stats.analyses} analyses, {stats.cache_hits} cache hits")
    print()
    print("| didSave -> inlay hints at the client | ms (median) | min | max | hints | target |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, xs, n in rows:
        goal = "< 1000" if "cold" not in name else ""
        print(f"| {name} | {statistics.median(xs):.1f} | {min(xs):.1f} | {max(xs):.1f} | {n} | {goal} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--target", default="cuda -arch=sm_80")
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
