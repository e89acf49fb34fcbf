"""The language server, driven over stdio by a real LSP client (pytest-lsp), as an editor would.

The document holds the reference GEMM (examples/gemm_cpu_demo.py's kernel, verbatim), a failing import, a
kernel with an undefined name, a @tilelang.jit factory with its arguments in a `# tilelang: args=` comment
whose A tile cannot use cp.async (K = 1001), and a factory without arguments. The tests check the exact
diagnostics (ranges, severities, messages), the inlay hints at their positions, hover text, the
lower-trace code lens, that an unchanged save does not run the compiler again, and that the file runs in
a worker process, not in the server.
"""
import os
import pathlib
import re
import sys

import kernels
import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

import tilelang

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "tilelang", "lsp"]

TAIL = '''

import a_module_that_does_not_exist  # noqa: F401
import os as _os
open(__file__ + ".pid", "w").write(str(_os.getpid()))


@T.prim_func
def broken(A: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((128, 64), "float16")
        T.copy(A, B_shared)
        T.copy(A_s, C)


@T.prim_func
def conflict(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 128), "float16"), C: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((128, 64), "float16")
        B_s = T.alloc_shared((64, 128), "float16")
        C_l = T.alloc_fragment((128, 128), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
        T.gemm(A_s, B_s, C_l, policy=T.GemmWarpPolicy.FullCol)
        T.copy(C_l, C)


@tilelang.jit(out_idx=[2])  # tilelang: args=256, 256, 1001
def ragged(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def ragged_gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return ragged_gemm


@tilelang.jit
def needs_sizes(M, N):
    @T.prim_func
    def scale(A: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(M, N):
                A[i, j] = A[i, j] * 2.0

    return scale
'''


def demo_source():
    """examples/gemm_cpu_demo.py up to its main(): the imports, sizes and the reference kernel."""
    text = (ROOT / "examples" / "gemm_cpu_demo.py").read_text()
    return text[:text.index("\n\ndef main")]


def document_text():
    return demo_source() + TAIL


def line_of(text, needle, start=0):
    lines = text.split("\n")
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i
    raise AssertionError(f"{needle!r} not in the document")


def ident(uri):
    return types.TextDocumentIdentifier(uri=uri)


def whole(uri):
    return types.InlayHintParams(text_document=ident(uri), range=types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=10_000, character=0)))


async def stats(client):
    s = await client.protocol.send_request_async("tilelang/stats", {})
    return {"analyses": s.analyses, "cache_hits": s.cache_hits}


async def start(client, options):
    # the client answers refresh requests (as editors do)
    client.feature(types.WORKSPACE_CODE_LENS_REFRESH)(lambda *a: None)
    caps = pytest_lsp.client_capabilities("visual-studio-code")
    await client.initialize_session(types.InitializeParams(capabilities=caps, initialization_options=options))


@pytest.fixture(scope="module")
def doc_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lsp")
    path = folder / "gemm_doc.py"
    path.write_text(document_text())
    return path


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, doc_path):
    await start(lsp_client, {"target": "cuda -arch=sm_80"})
    lsp_client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=doc_path.as_uri(), language_id="python", version=1, text=doc_path.read_text())))
    await lsp_client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    yield
    await lsp_client.shutdown_session()


def _rng(line, c0, c1, end_line=None):
    return ((line, c0), (line if end_line is None else end_line, c1))


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnostics_exact_ranges_and_messages(client: LanguageClient, doc_path):
    text = doc_path.read_text()
    lines = text.split("\n")
    got = [(d.severity, ((d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character)),
            d.message, d.source) for d in client.diagnostics[doc_path.as_uri()]]
    imp = line_of(text, "import a_module_that_does_not_exist")
    bad = line_of(text, "T.copy(A, B_shared)")
    slow = line_of(text, "T.copy(A[by * block_M, k * block_K], A_s)")
    nodef = line_of(text, "def needs_sizes")
    row = line_of(text, "policy=T.GemmWarpPolicy.FullRow")
    col = line_of(text, "policy=T.GemmWarpPolicy.FullCol")
    S = types.DiagnosticSeverity
    expected = [
        (S.Information, _rng(imp, 0, len("import a_module_that_does_not_exist")),
         "while loading this file to find its kernels, this statement raised ModuleNotFoundError: "
         "No module named 'a_module_that_does_not_exist'", "tilelang"),
        (S.Error, _rng(bad, lines[bad].index("B_shared"), lines[bad].index("B_shared") + len("B_shared")),
         "name 'B_shared' is not defined", "tilelang"),
        (S.Error, _rng(col, 8, len(lines[col])),
         f"layout conflict for fragment 'C_l': T.gemm accumulator at line {row + 1} gives it mma_C(128x128, warps 4x1), "
         f"but T.gemm accumulator (line {col + 1}) needs mma_C(128x128, warps 1x4). Copy the data into a second "
         "fragment between the two uses", "tilelang"),
        (S.Warning, _rng(slow, lines[slow].index("T.copy"), len(lines[slow])),
         "T.copy A -> A_s does not use cp.async: the row length of 'A' (1001) is not a multiple of 8 elements, "
         "so its rows are not 16-byte aligned; it is lowered to synchronous loads", "tilelang"),
        (S.Information, _rng(nodef, 0, len("def needs_sizes(M, N):")),
         "@tilelang.jit factory 'needs_sizes' is not compiled: its parameter(s) M, N have no default; give them "
         "in a `# tilelang: args=...` comment on the decorator line", "tilelang"),
    ]
    assert got == expected
    diags = client.diagnostics[doc_path.as_uri()]
    assert [d.code for d in diags] == ["ModuleNotFoundError", "TileLangSyntaxError", "TileLangLayoutError",
                                       "TileLangPerformanceWarning", "TileLangNoArgs"]
    # the layout conflict points at the other gemm too
    [rel] = diags[2].related_information
    assert (rel.location.uri, rel.location.range.start.line, rel.location.range.start.character,
            rel.location.range.end.line, rel.location.range.end.character) == \
        (doc_path.as_uri(), row, 8, row, len(lines[row]))
    assert all(d.related_information is None for i, d in enumerate(diags) if i != 2)


@pytest.mark.asyncio(loop_scope="module")
async def test_inlay_hints_of_the_reference_gemm(client: LanguageClient, doc_path):
    text = doc_path.read_text()
    lines = text.split("\n")
    hints = await client.text_document_inlay_hint_async(whole(doc_path.as_uri()))
    at = {(h.position.line, h.position.character): h.label for h in hints}
    res = tilelang.compile(kernels.demo_matmul_kernel(), target="cuda -arch=sm_80").get_resource_usage()
    spills = res["spill_stores"] + res["spill_loads"]
    end = line_of(text, "def main") if "def main" in text else len(lines)
    mma = "mma_C(128x128, warps 2x2)"
    expected = {
        "with T.Kernel(": f"smem 32768 B, {res['registers']} registers, {spills} B spilled",
        "A_shared = T.alloc_shared": "128x32 float16 shared, 8192 B x 2 stages",
        "B_shared = T.alloc_shared": "32x128 float16 shared, 8192 B x 2 stages",
        "C_local = T.alloc_fragment": f"128x128 float32 fragment, 65536 B, {mma}, 128 elem/thread",
        "T.clear(C_local)": f"partitioned by {mma}, 128 elem/thread",
        "T.Pipelined(": "2-stage cp.async pipeline, 16384 B smem/stage",
        "T.copy(A[by": "16-byte cp.async into a swizzled shared tile",
        "T.copy(B[k": "16-byte cp.async into a swizzled shared tile",
        "T.gemm(A_shared": "mma.sync m16n8k16 f16, warps 2x2, 64x64 per warp",
        "T.copy(C_local": f"partitioned by {mma}, 128 elem/thread; 2-wide vector stores to C",
    }
    demo_end = line_of(text, "import a_module_that_does_not_exist")
    for needle, label in expected.items():
        i = line_of(text, needle)
        assert i < min(end, demo_end)
        assert at.get((i, len(lines[i]))) == label, (needle, [h for h in at.items() if h[0][0] == i])
    assert res["shared_bytes"] == 32768
    # the ragged kernel's A tile is not pipelined through cp.async, and its hint says so
    slow = line_of(text, "T.copy(A[by * block_M, k * block_K], A_s)")
    assert at[(slow, len(lines[slow]))].startswith("no cp.async: it is lowered to synchronous loads")
    a_s = line_of(text, "A_s = T.alloc_shared((block_M, block_K)")
    assert at[(a_s, len(lines[a_s]))] == "128x32 float16 shared, 8192 B"
    # a range request gets only the hints inside it
    i = line_of(text, "T.gemm(A_shared")
    part = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=ident(doc_path.as_uri()),
        range=types.Range(start=types.Position(line=i, character=0), end=types.Position(line=i, character=99))))
    assert [h.label for h in part] == ["mma.sync m16n8k16 f16, warps 2x2, 64x64 per warp"]


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_on_tile_ops(client: LanguageClient, doc_path):
    text = doc_path.read_text()
    i = line_of(text, "T.gemm(A_shared")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=ident(doc_path.as_uri()), position=types.Position(line=i, character=10)))
    decision, code = hover.contents.value.split("\n\n**Generated code**\n\n")
    assert decision == (
        "**TileLang decisions** (cuda sm_80)\n\n- T.gemm: mma.sync m16n8k16 f16, warps 2x2, 64x64 per warp "
        "(4x8 mma tiles per k16 step); A by ldmatrix.x4, B by ldmatrix.trans")
    # the lines of CUDA the op produced (from the kernel's source map)
    assert code.startswith("```cuda\n") and "tl::ldmatrix<" in code and "tl::mma_m16n8k16_f16(" in code
    k = line_of(text, "with T.Kernel(")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=ident(doc_path.as_uri()), position=types.Position(line=k, character=8)))
    assert re.search(r"A_shared\s+128x32\s+float16\s+2\s+16384\s+0", hover.contents.value)
    assert "128 threads" in hover.contents.value
    blank = line_of(text, "# Dimension definitions")
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=ident(doc_path.as_uri()), position=types.Position(line=blank, character=2))) is None


@pytest.mark.asyncio(loop_scope="module")
async def test_unchanged_save_does_not_recompile(client: LanguageClient, doc_path):
    uri = doc_path.as_uri()
    before = await stats(client)
    first = list(client.diagnostics[uri])
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=ident(uri)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    after = await stats(client)
    assert after == {"analyses": before["analyses"], "cache_hits": before["cache_hits"] + 1}
    assert list(client.diagnostics[uri]) == first
    # an edit is new content: analysed again. Until the save, hints follow the lines the edit moved and
    # leave out the line it changed; a hint request right after the save waits for the new analysis.
    text = doc_path.read_text()
    new = "# an edit\n" + text.replace("num_stages=2)", "num_stages=3)", 1)  # the reference GEMM's loop
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)]))
    gemm, pipe = line_of(new, "T.gemm(A_shared"), line_of(new, "num_stages=3)")
    a_shared = line_of(new, "A_shared = T.alloc_shared")
    moved = {h.position.line: h.label for h in await client.text_document_inlay_hint_async(whole(uri))}
    assert moved[gemm].startswith("mma.sync") and pipe not in moved
    assert moved[a_shared] == "128x32 float16 shared, 8192 B x 2 stages"
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=ident(uri)))
    fresh = {h.position.line: h.label for h in await client.text_document_inlay_hint_async(whole(uri))}
    assert fresh[pipe] == "3-stage cp.async pipeline, 16384 B smem/stage"
    assert fresh[a_shared] == "128x32 float16 shared, 8192 B x 3 stages"
    assert (await stats(client))["analyses"] == before["analyses"] + 1
    # the diagnostics of the new text were published before the hints were answered
    errors = [line_of(new, "T.copy(A, B_shared)"), line_of(new, "policy=T.GemmWarpPolicy.FullCol")]
    assert [d.range.start.line for d in client.diagnostics[uri] if d.severity == types.DiagnosticSeverity.Error] == errors


@pytest.mark.asyncio(loop_scope="module")
async def test_lower_trace_code_lens(client: LanguageClient, doc_path):
    uri = doc_path.as_uri()
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=ident(uri)))
    by_kernel = {lens.command.arguments[1]: lens for lens in lenses}
    assert sorted(by_kernel) == ["conflict", "matmul_kernel", "ragged"]
    lens = by_kernel["matmul_kernel"]
    assert lens.command.title == "lower trace" and lens.command.command == "tilelang.lowerTrace"
    path = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=list(lens.command.arguments)))
    assert path.endswith("index.html") and os.path.isfile(path)
    page = pathlib.Path(path).read_text()
    assert "Lower trace of <code>matmul_kernel</code> for target <code>cuda sm_80</code>" in page
    assert "mma_m16n8k16" in (pathlib.Path(path).parent / "final_source.cu").read_text()


@pytest.mark.asyncio(loop_scope="module")
async def test_user_code_runs_in_a_worker_not_the_server(client: LanguageClient, doc_path):
    pid = int(pathlib.Path(str(doc_path) + ".pid").read_text())
    assert pid != client._server.pid and pid != os.getpid()


SMALL = '''import tilelang.language as T


@T.prim_func
def axpy(X: T.Tensor((1000,), "float32"), Y: T.Tensor((1000,), "float32")):
    with T.Kernel(T.ceildiv(1000, 256), threads=256) as bx:
        X_s = T.alloc_shared((256,), "float32")
        T.copy(X[bx * 256], X_s)
        for i in T.Parallel(256):
            Y[bx * 256 + i] += 2.0 * X_s[i]
'''

HANG = '''import time
import tilelang  # noqa: F401
time.sleep(60)
'''


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def cpu_client(lsp_client: LanguageClient):
    await start(lsp_client, {"tilelang": {"target": "cpu", "timeout": 20}})
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_cpu_target_and_timeout(cpu_client: LanguageClient, tmp_path):
    client = cpu_client
    path = tmp_path / "axpy.py"
    path.write_text(SMALL)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=SMALL)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[path.as_uri()]) == []
    hints = await client.text_document_inlay_hint_async(whole(path.as_uri()))
    # the CPU target has no shared-memory plan, layouts or ptxas resources: allocation facts only
    i = line_of(SMALL, "X_s = T.alloc_shared")
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [
        (i, len(SMALL.split("\n")[i]), "256 float32 shared, 1024 B")]
    # a Python file that does not mention the package is not run at all
    plain = tmp_path / "plain.py"
    plain.write_text("open(__file__ + '.ran', 'w').close()\n")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=plain.as_uri(), language_id="python", version=1, text=plain.read_text())))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[plain.as_uri()]) == [] and not (tmp_path / "plain.py.ran").exists()
    # a file that does not finish loading is stopped at the time limit, and the server keeps serving
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tilelang": {"timeout": 1.5}}))
    hang = tmp_path / "hang.py"
    hang.write_text(HANG)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=hang.as_uri(), language_id="python", version=1, text=HANG)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    [d] = client.diagnostics[hang.as_uri()]
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.message == ("compiling the kernels of this file took more than 1.5 s; the worker was stopped "
                         "(raise the 'timeout' setting if this is expected)")
    # a file that kills its process: the worker dies, the server reports it and keeps serving
    crash = tmp_path / "crash.py"
    crash.write_text("import os\nimport tilelang  # noqa: F401\nos._exit(3)\n")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=crash.as_uri(), language_id="python", version=1, text=crash.read_text())))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    [d] = client.diagnostics[crash.as_uri()]
    assert d.message == "the worker process exited with code 3 without an answer"
    assert (await stats(client)) == {"analyses": 3, "cache_hits": 0}


def test_columns_are_utf16_code_units():
    """The compiler's columns are UTF-8 bytes (Python's ast); LSP positions count UTF-16 code units."""
    from tilelang.lsp.analysis import Document

    line = 's = "é😀"; T.copy(A, B_shared)'
    doc = Document("/x/k.py", "import tilelang\n" + line + "\n")
    byte_col = line.encode("utf-8").index(b"B_shared")
    assert doc.pos(2, byte_col) == [1, len('s = "é😀"; T.copy(A, '.encode("utf-16-le")) // 2]
    assert doc.pos(2, byte_col)[1] == line.index("B_shared") + 1  # the emoji is two UTF-16 units
    start, end = doc.range_at(2, byte_col + 1)  # the Name node that starts there
    assert (start, end) == ([1, 21], [1, 29])  # 20 characters before it, one of them two units wide


def test_python_syntax_errors_that_only_the_compiler_finds_are_the_users(tmp_path):
    """issue 39: `return` or `break` outside their blocks parse, and then Python's compile() refuses them;
    the worker labelled that 'internal error in the tilelang worker' at 1:1. It is the user's error, at its
    line and column, and the rest of the file is still analysed."""
    from tilelang.lsp.worker import run_job

    text = SMALL + "\n\nreturn 1\n\n\nfor i in range(2):\n    pass\nbreak\n"
    path = tmp_path / "stray.py"
    path.write_text(text)
    result = run_job({"op": "analyze", "path": str(path), "text": text, "target": "cpu"}, 120)
    assert "error" not in result, result
    got = [(d["severity"], d["lineno"], d["colno"], d["message"], d["code"]) for d in result["diagnostics"]]
    assert got == [("error", line_of(text, "return 1") + 1, 1, "invalid Python: 'return' outside function",
                    "SyntaxError"),
                   ("error", line_of(text, "break") + 1, 1, "invalid Python: 'break' outside loop", "SyntaxError")]
    assert [(k["name"], k["ok"]) for k in result["kernels"]] == [("axpy", True)]
