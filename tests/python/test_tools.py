"""The kernel engineer's tools: the lower trace (tilelang.tools.ir_lower_trace, TL_LOWER_TRACE), the profiler
(kernel.get_profiler(): inputs, assert_allclose, do_bench) and layout plots (tilelang.tools.plot_layout)."""
import json
import os
import re
import struct
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import kernels as K
import tilelang
from tilelang import TensorSupplyType
from tilelang.errors import TileLangArgumentError, TileLangCompileError, TileLangUnsupportedError
from tilelang.tools import ir_lower_trace, layout_tables, plot_layout
from tilelang.tools.lower_trace import abbreviate_layouts


def _small_matmul():
    return K.matmul(64, 64, 64, 32, 32, 32, dtype="float32")


# ---------------------------------------------------------------------------------------------------
# Lower trace
# ---------------------------------------------------------------------------------------------------
def test_lower_trace_writes_every_pass(tmp_path):
    func = _small_matmul()
    compiled = tilelang._ffi.compile(func, "cpu", {}, "", True, "", False, True)
    records = [(name, tilelang._ffi.print_func(ir), ms, ch) for name, ir, ms, ch in compiled.trace]
    assert len(records) >= 2
    trace = ir_lower_trace(func, target="cpu", out_dir=str(tmp_path))
    assert [p.name for p in trace.passes] == [r[0] for r in records]
    files = sorted(os.listdir(tmp_path))
    assert "00_input.txt" in files and "index.html" in files and "final_source.cpp" in files
    assert (tmp_path / "00_input.txt").read_text() == tilelang.script(func)
    for p, (name, ir, ms, changed) in zip(trace.passes, records):
        assert p.file_name.startswith(f"{p.index:02d}_") and name in p.file_name
        assert (tmp_path / p.file_name).read_text() == ir  # the IR after exactly this pass
        assert p.changed == changed and p.ms >= 0
    # The last dump is the fully lowered IR: tile ops are gone, so it differs from the input.
    assert (tmp_path / trace.passes[-1].file_name).read_text() != tilelang.script(func)
    # index.txt: one line per pass, "(unchanged)" exactly on the passes that changed nothing.
    lines = (tmp_path / "index.txt").read_text().splitlines()[1:]
    assert len(lines) == len(records)
    for line, (name, _, _, changed) in zip(lines, records):
        assert name in line and ("(unchanged)" in line) == (not changed) and " ms" in line
    meta = json.loads((tmp_path / "trace.json").read_text())
    assert [m["changed"] for m in meta["passes"]] == [r[3] for r in records]
    # the total is the sum of this trace's own pass times (the other compile's times differ under load)
    assert abs(meta["total_ms"] - sum(m["ms"] for m in meta["passes"])) < 0.01
    assert [m["ms"] for m in meta["passes"]] == [p.ms for p in trace.passes]
    # The final source is what the kernel compiles.
    kernel = tilelang.compile(func, target="cpu")
    assert (tmp_path / "final_source.cpp").read_text() == kernel.get_kernel_source()


def test_lower_trace_html_shows_diffs_offline(tmp_path):
    func = _small_matmul()
    trace = ir_lower_trace(func, out_dir=str(tmp_path))
    page = (tmp_path / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for p in trace.passes:
        assert f'id="pass{p.index}"' in page and p.file_name in page
    changed = [p for p in trace.passes if p.changed]
    assert changed, "lowering a GEMM must change the IR"
    # one diff table per changed pass, marked additions / changes
    assert page.count('class="diff"') == len(changed)
    assert "diff_add" in page or "diff_chg" in page
    assert page.count("IR unchanged by this pass") == len(trace.passes) - len(changed)
    # self-contained: no scripts, nothing fetched
    assert "<script" not in page and "http://" not in page and "https://" not in page


def test_lower_trace_in_memory_and_summary():
    trace = ir_lower_trace(_small_matmul())
    assert trace.out_dir is None and trace.final_source and "matmul_kernel" in trace.final_source
    assert trace.unchanged() == [p.name for p in trace.passes if not p.changed]
    assert trace.summary().count(" ms") == len(trace.passes) + 1


def test_lower_trace_env_var_hook(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_LOWER_TRACE", str(tmp_path))
    kernel = tilelang.compile(K.elementwise_add(block=64), target="cpu")
    dirs = os.listdir(tmp_path)
    assert len(dirs) == 1 and dirs[0].startswith("main_cpu_")
    out = tmp_path / dirs[0]
    assert (out / "index.html").exists() and (out / "index.txt").exists()
    assert (out / "final_source.cpp").read_text() == kernel.get_kernel_source()
    monkeypatch.delenv("TL_LOWER_TRACE")
    tilelang.compile(K.elementwise_add(block=32), target="cpu")
    assert len(os.listdir(tmp_path)) == 1  # no variable, no trace


def _trace_dirs(root):
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.exists() else []


def test_lower_trace_env_takes_tilelangs_values(tmp_path, monkeypatch, capsys):
    """TL_LOWER_TRACE=1/on/html/terminal/both/0 with the directory in TL_LOWER_TRACE_DIR, as in TileLang:
    1 writes under ./tmp/lower_trace_dir (no folder named "1"), terminal prints and writes nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TL_LOWER_TRACE_DIR", raising=False)
    monkeypatch.setenv("TL_LOWER_TRACE", "1")
    tilelang.compile(K.elementwise_add(block=64), target="cpu")
    assert not (tmp_path / "1").exists()
    default = tmp_path / "tmp" / "lower_trace_dir"
    (first,) = _trace_dirs(default)
    assert first.startswith("main_cpu_") and (default / first / "index.html").exists()
    assert capsys.readouterr().err.count("lower trace of") == 0  # html alone prints nothing

    monkeypatch.setenv("TL_LOWER_TRACE", "on")
    monkeypatch.setenv("TL_LOWER_TRACE_DIR", str(tmp_path / "traces"))
    tilelang.compile(K.elementwise_add(block=32), target="cpu")
    assert len(_trace_dirs(tmp_path / "traces")) == 1 and not (tmp_path / "on").exists()

    monkeypatch.setenv("TL_LOWER_TRACE", "terminal")
    monkeypatch.setenv("TL_LOWER_TRACE_DIR", str(tmp_path / "terminal_only"))
    kernel = tilelang.compile(K.elementwise_add(block=16), target="cpu")
    err = capsys.readouterr().err
    assert "lower trace of 'main' for target 'cpu'" in err and "+++ after " in err
    assert re.search(r"^--- \d\d \w+$", err, re.M)  # a changed pass's header
    assert not (tmp_path / "terminal_only").exists() and kernel.get_kernel_source()

    monkeypatch.setenv("TL_LOWER_TRACE", "both")
    tilelang.compile(K.elementwise_add(block=128), target="cpu")
    assert "lower trace of 'main'" in capsys.readouterr().err
    assert len(_trace_dirs(tmp_path / "terminal_only")) == 1

    for off in ("0", "off", "false", ""):
        monkeypatch.setenv("TL_LOWER_TRACE", off)
        tilelang.compile(K.elementwise_add(block=256), target="cpu")
    assert len(_trace_dirs(default)) == 1 and len(_trace_dirs(tmp_path / "terminal_only")) == 1
    assert capsys.readouterr().err == "" and not (tmp_path / "0").exists()


def test_lower_trace_folders_and_title_name_the_arch(tmp_path, monkeypatch):
    """Kernels built for sm_80 and sm_90a are told apart by folder name, and the page says the arch."""
    monkeypatch.setenv("TL_LOWER_TRACE", "1")
    monkeypatch.setenv("TL_LOWER_TRACE_DIR", str(tmp_path))
    func = K.elementwise_add(block=64)
    for arch in ("sm_80", "sm_90a"):
        tilelang.compile(func, target=f"cuda -arch={arch}", execution_backend="emulator")
    dirs = _trace_dirs(tmp_path)
    assert len(dirs) == 2
    (d80,) = [d for d in dirs if d.startswith("main_cuda_sm_80_")]
    (d90,) = [d for d in dirs if d.startswith("main_cuda_sm_90a_")]
    page = (tmp_path / d90 / "index.html").read_text()
    assert "<title>lower trace: main (cuda sm_90a)</title>" in page
    assert "for target <code>cuda sm_90a</code>" in page
    assert json.loads((tmp_path / d80 / "trace.json").read_text())["arch"] == "sm_80"
    assert "for target 'cuda sm_80'" in (tmp_path / d80 / "index.txt").read_text()


def test_lower_trace_env_hook_records_a_failure(tmp_path, monkeypatch):
    real_compile = tilelang._ffi.compile

    def failing_traced_compile(func, target, cfg, inc, use_cache, cache_dir, build, trace=False):
        if trace:
            raise TileLangCompileError("pass X rejected the program")
        return real_compile(func, target, cfg, inc, use_cache, cache_dir, build, trace)

    monkeypatch.setattr(tilelang._ffi, "compile", failing_traced_compile)
    monkeypatch.setenv("TL_LOWER_TRACE", str(tmp_path))
    kernel = tilelang.compile(K.elementwise_add(block=64), target="cpu")  # the compile itself goes on
    assert kernel.get_kernel_source()
    (out,) = os.listdir(tmp_path)
    assert "pass X rejected the program" in (tmp_path / out / "error.txt").read_text()
    assert (tmp_path / out / "00_input.txt").exists()


def test_lower_trace_is_looked_up_in_the_backend_registry():
    func = _small_matmul()
    assert set(tilelang.tools.available_targets()) >= {"cpu", "cuda"}
    # a target kind without a backend: a clear error naming what is available
    if "metal" not in tilelang.tools.available_targets():
        with pytest.raises(TileLangUnsupportedError, match=r"'metal'.*available for: .*cpu"):
            ir_lower_trace(func, target="metal")


def test_lower_trace_shows_the_kernel_that_was_built(tmp_path, monkeypatch):
    """The JIT writes the trace of its own compile: the named arch and the pass configs change the
    lowering, and the trace's final source is the kernel's source byte for byte."""
    monkeypatch.setenv("TL_LOWER_TRACE", str(tmp_path))
    func = K.matmul(128, 128, 64, 64, 64, 32, num_stages=2)
    plain = tilelang.compile(func, target="cuda -arch=sm_86", execution_backend="emulator")
    sync = tilelang.compile(func, target="cuda -arch=sm_86", execution_backend="emulator",
                            pass_configs={"tl.disable_async_copy": True})
    assert "cp.async" in plain.get_kernel_source() or "cp_async" in plain.get_kernel_source()
    assert plain.get_kernel_source() != sync.get_kernel_source()
    sources = sorted((d / "final_source.cu").read_text() for d in tmp_path.iterdir())
    assert sources == sorted([plain.get_kernel_source(), sync.get_kernel_source()])


# ---------------------------------------------------------------------------------------------------
# Profiler
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mm_kernel():
    return tilelang.compile(_small_matmul(), out_idx=[2], target="cpu")


def _ref_mm(A, B):
    return A.astype(np.float64) @ B.astype(np.float64)


def test_profiler_inputs_follow_params(mm_kernel):
    prof = mm_kernel.get_profiler()
    assert [s.name for s in prof.input_specs] == ["A", "B"]  # C is an out_idx output
    A, B = prof.get_inputs()
    assert A.shape == (64, 64) and A.dtype == np.float32 and B.shape == (64, 64)
    assert prof.get_inputs()[0] is A  # made once
    ones = mm_kernel.get_profiler(tensor_supply_type=TensorSupplyType.One).get_inputs()[0]
    assert np.all(ones == 1)
    ints = mm_kernel.get_profiler(tensor_supply_type=TensorSupplyType.Integer).get_inputs()[0]
    assert np.all(ints == np.round(ints)) and ints.min() >= -2 and ints.max() <= 2 and ints.std() > 0
    uni = mm_kernel.get_profiler(tensor_supply_type="Uniform").get_inputs()[0]
    assert uni.min() >= -1 and uni.max() < 1 and np.any(uni != np.round(uni))
    f16 = tilelang.compile(K.matmul(32, 32, 32, 32, 32, 32), out_idx=[2], target="cpu")
    assert f16.get_profiler().get_inputs()[0].dtype == np.float16


def test_assert_allclose_passes_and_reports_the_worst_element(mm_kernel):
    prof = mm_kernel.get_profiler(tensor_supply_type=TensorSupplyType.Integer)
    prof.assert_allclose(_ref_mm, atol=1e-5, rtol=1e-5)  # integer inputs: exact

    def off_by_one_element(A, B):
        ref = _ref_mm(A, B)
        ref[5, 7] += 3.0
        return ref

    with pytest.raises(AssertionError) as e:
        prof.assert_allclose(off_by_one_element, atol=1e-2, rtol=1e-2)
    msg = str(e.value)
    assert "'C'" in msg and "1 of 4096 elements" in msg and "(5, 7)" in msg and "max abs error 3" in msg
    assert "max rel error" in msg
    # a tolerated ratio of mismatches lets it pass
    prof.assert_allclose(off_by_one_element, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.001)
    with pytest.raises(AssertionError, match="returned 2 outputs"):
        prof.assert_allclose(lambda A, B: (_ref_mm(A, B), _ref_mm(A, B)))


def test_profiler_symbolic_dims_and_in_place_outputs():
    add = K.elementwise_add(block=64)
    kernel = tilelang.compile(add, out_idx=[2], target="cpu")
    assert kernel.get_profiler(dynamic_values={"n": 300}).get_inputs()[0].shape == (300,)
    prof = kernel.get_profiler(shapes={"A": (77,)})  # binds n for B too
    A, B = prof.get_inputs()
    assert A.shape == (77,) and B.shape == (77,)
    prof.assert_allclose(lambda a, b: a.astype(np.float64) + b, atol=1e-6, rtol=1e-6)
    default = tilelang.profiler.DEFAULT_DYNAMIC_SIZE
    assert kernel.get_profiler().get_inputs()[0].shape == (default,)
    # without out_idx the kernel writes into its last parameter; the reference returns its expected value
    in_place = tilelang.compile(add, target="cpu").get_profiler(dynamic_values={"n": 50})
    assert len(in_place.input_specs) == 3
    in_place.assert_allclose(lambda a, b, c: a.astype(np.float64) + b, atol=1e-6, rtol=1e-6)
    with pytest.raises(AssertionError, match="'C'"):
        in_place.assert_allclose(lambda a, b, c: a.astype(np.float64) - b, atol=1e-6, rtol=1e-6)
    with pytest.raises(TileLangArgumentError, match="dimensions"):
        kernel.get_profiler(shapes={"A": (3, 4)})


def test_do_bench_counts_and_modes(mm_kernel):
    prof = mm_kernel.get_profiler()
    calls = []

    def fn(A, B):
        calls.append(1)

    prof.do_bench(fn, n_warmup=3, n_repeat=7)
    assert len(calls) == 2 + 3 + 7  # two estimate runs, then exactly the counts asked for
    times = prof.do_bench(n_warmup=1, n_repeat=5, return_mode="all")
    assert len(times) == 5 and all(t > 0 for t in times)
    med = prof.do_bench(warmup=1, rep=5)
    assert isinstance(med, float) and med > 0
    lo, hi = prof.do_bench(n_warmup=1, n_repeat=9, quantiles=[0.0, 1.0])
    assert lo <= hi
    # a zero-argument callable is timed as it is
    assert prof.do_bench(lambda: None, n_repeat=3) >= 0
    with pytest.raises(TileLangArgumentError):
        prof.do_bench(return_mode="p99")


# ---------------------------------------------------------------------------------------------------
# Layout plots: the mma.sync m16n8k16 accumulator fragment (PTX ISA, "Matrix Fragments for mma.m16n8k16")
# ---------------------------------------------------------------------------------------------------
class MmaM16N8K16Accumulator:
    """c0..c3 of each lane: row = groupID (+8 for c2, c3), col = threadID_in_group * 2 + (i % 2), where
    groupID = laneid >> 2 and threadID_in_group = laneid % 4."""

    shape = (16, 8)

    def thread_local(self, row, col):
        lane = (row % 8) * 4 + col // 2
        return lane, (row // 8) * 2 + col % 2


def _fragment_from_spec():
    """The same fragment built the other way round, from the ISA's per-register formula."""
    thread = np.full((16, 8), -1, np.int64)
    local = np.full((16, 8), -1, np.int64)
    for lane in range(32):
        group, tig = lane >> 2, lane % 4
        for i in range(4):
            row, col = group + (8 if i >= 2 else 0), tig * 2 + (i % 2)
            thread[row, col], local[row, col] = lane, i
    return thread, local


def test_mma_fragment_protocol_matches_the_isa():
    thread, local = layout_tables(MmaM16N8K16Accumulator())
    ref_t, ref_l = _fragment_from_spec()
    assert np.array_equal(thread, ref_t) and np.array_equal(local, ref_l)
    assert len({(t, v) for t, v in zip(thread.ravel(), local.ravel())}) == 128  # each register once


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def _svg_labels(path):
    root = ET.parse(path).getroot()  # valid XML
    assert root.tag.endswith("svg")
    return ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]


def test_plot_mma_fragment_png_and_svg(tmp_path):
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "frag.png", tmp_path / "frag.svg"
    assert plot_layout(MmaM16N8K16Accumulator(), str(png), title="mma m16n8k16 C") == str(png)
    w, h = _png_size(png)
    assert w > 100 and h > 100 and h > w  # 16 rows x 8 columns: taller than wide
    plot_layout(MmaM16N8K16Accumulator(), str(svg))
    labels = _svg_labels(svg)
    cells = [t for t in labels if t.startswith("T") and ":" in t]
    assert len(cells) == 128
    # (0,0) c0 of lane 0; (0,1) c1 of lane 0; (8,0) c2 of lane 0; (3,5) lane 14 c1; (15,7) lane 31 c3
    for label in ("T0:0", "T0:1", "T0:2", "T14:1", "T31:3"):
        assert cells.count(label) == 1, label
    assert "T31:4" not in cells and "T32:0" not in cells


def test_plot_layout_in_tilelangs_spelling(tmp_path):
    """plot_layout(layout, save_directory=, name=, formats=) writes <dir>/<name>.<format> per format."""
    pytest.importorskip("matplotlib")
    frag = MmaM16N8K16Accumulator()
    out = tmp_path / "plots"
    paths = plot_layout(frag, save_directory=str(out), name="mma_c", formats="png,svg")
    assert paths == [str(out / "mma_c.png"), str(out / "mma_c.svg")]
    assert _png_size(out / "mma_c.png")[0] > 100
    assert len([t for t in _svg_labels(out / "mma_c.svg") if t.startswith("T") and ":" in t]) == 128
    every = plot_layout(frag, save_directory=str(out), name="all", formats="all", colormap="viridis")
    assert sorted(os.path.basename(p) for p in every) == ["all.pdf", "all.png", "all.svg"]
    assert (out / "all.pdf").read_bytes()[:5] == b"%PDF-"
    # TileLang's second positional argument is the directory; its default format is pdf, name "layout"
    assert plot_layout(frag, str(tmp_path / "pos")) == [str(tmp_path / "pos" / "layout.pdf")]
    assert (tmp_path / "pos" / "layout.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(TileLangUnsupportedError, match="jpg"):
        plot_layout(frag, save_directory=str(out), formats="png,jpg")
    with pytest.raises(tilelang.errors.TileLangTypeError, match="not both"):
        plot_layout(frag, str(tmp_path / "x.png"), save_directory=str(out))


def test_plot_layout_from_arrays_and_errors(tmp_path):
    pytest.importorskip("matplotlib")
    thread, local = _fragment_from_spec()
    svg = tmp_path / "arrays.svg"
    plot_layout((thread, local), str(svg), labels=True)
    cells = sorted(t for t in _svg_labels(svg) if t.startswith("T") and ":" in t)
    assert cells == sorted(f"T{t}:{v}" for t, v in zip(thread.ravel(), local.ravel()))
    with pytest.raises(TileLangUnsupportedError, match=r"\.png, \.svg or \.pdf"):
        plot_layout(MmaM16N8K16Accumulator(), str(tmp_path / "frag.jpg"))
    with pytest.raises(tilelang.errors.TileLangTypeError):
        plot_layout((thread, local[:8]), str(svg))
    with pytest.raises(tilelang.errors.TileLangTypeError):
        plot_layout(object(), str(svg))


def test_lower_trace_uses_the_kernels_pass_configs(tmp_path, monkeypatch):
    """The trace shows the kernel that was built: with tl.disable_async_copy the traced IR has no cp.async."""
    import kernels as K

    monkeypatch.setenv("TL_LOWER_TRACE", str(tmp_path))
    from tilelang.jit import clear_compile_memo

    clear_compile_memo()
    k = tilelang.compile(K.matmul(128, 128, 64), target="cuda -arch=sm_86",
                         pass_configs={"tl.disable_async_copy": True})
    assert "cp_async" not in k.get_kernel_source()
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    final = (d / "final_source.cu").read_text()
    assert "for sm_86" in final and "cp_async" not in final


_FRAG = 'T.call_intrin("handle", "fragment", '


def test_trace_diffs_show_layouts_by_their_summary(tmp_path):
    """The fragment layouts LayoutInference attaches print as 17-argument calls (hundreds of characters a
    line): the page's diffs show the summary `tilelang info` prints instead; the dumps keep the exact IR."""
    func = K.matmul(128, 128, 64, 128, 128, 32, dtype="float16")
    trace = ir_lower_trace(func, target="cuda -arch=sm_80", out_dir=str(tmp_path))
    (li,) = [p for p in trace.passes if p.name == "LayoutInference"]
    assert 'T.call_intrin("handle", "fragment", "mma_C"' in (tmp_path / li.file_name).read_text()
    kernel = tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator")
    summaries = set(kernel.layouts.values())
    assert "mma_C(128x128, warps 2x2)" in summaries
    page = (tmp_path / "index.html").read_text()
    assert "layout&lt;mma_C(128x128, warps 2x2)&gt;" in page
    assert "&quot;fragment&quot;" not in page and '"fragment"' not in page
    short = abbreviate_layouts(li.ir)
    assert max(len(line) for line in short.splitlines()) < 200 < max(len(line) for line in li.ir.splitlines())
    assert '"fragment"' not in short
    # every line without a layout value is kept character for character, and no line is added or lost
    full, abbreviated = li.ir.splitlines(), short.splitlines()
    assert len(full) == len(abbreviated)
    assert all(a == b for a, b in zip(full, abbreviated) if '"fragment"' not in a)
    assert all(b.startswith(a[:a.index(_FRAG)]) for a, b in zip(full, abbreviated) if _FRAG in a)


def test_abbreviate_layouts_matches_parentheses_outside_strings():
    call = ('T.call_intrin("handle", "fragment", "striped", "striped(8x8, 32 threads, vec 2)", "at f.py:3 (a \\" ) b",'
            ' T.call_intrin("handle", "list", T.int64(8)), (1 + (2)))')
    text = f"x = f({call}, y)\nz = {call}"
    assert abbreviate_layouts(text) == ("x = f(layout<striped(8x8, 32 threads, vec 2)>, y)\n"
                                        "z = layout<striped(8x8, 32 threads, vec 2)>")
    # an unclosed call is left alone
    assert abbreviate_layouts(call[:-1]) == call[:-1]
