"""TileLang's JITKernel members that scripts call (the language issue, item 6): show_source /
export_sources / print_source_code, kernel_source, get_host_source, params, n_regs / n_spills /
n_max_threads, show_ptx / export_ptx, get_sass / show_sass / export_sass, export_library, run_once.
Before: each was an AttributeError."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangUnsupportedError
from tilelang.tools.sass import find_cuobjdump

n = T.dynamic("n")


def scale_kernel():
    @T.prim_func
    def scale(A: T.Tensor((n, 64), "float32"), B: T.Tensor((n, 64), "float32"), alpha: T.float32):
        with T.Kernel(T.ceildiv(n, 4), threads=128) as bx:
            for i, j in T.Parallel(4, 64):
                if bx * 4 + i < n:
                    B[bx * 4 + i, j] = A[bx * 4 + i, j] * alpha

    return scale


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
def test_sources_and_params(target, tmp_path, capsys):
    k = tilelang.compile(scale_kernel(), target=target)
    assert k.kernel_source == k.get_kernel_source() and "scale" in k.kernel_source
    assert [(p.name, p.dtype) for p in k.params] == [("A", "float32"), ("B", "float32"), ("alpha", "float32")]
    assert str(k.params[0].shape[0]) == "n" and k.params[0].shape[1] == 64 and k.params[2].is_scalar()
    host = k.get_host_source()
    assert "no host source is generated" in host and "alpha: float32 (scalar)" in host
    k.show_source("both")
    out = capsys.readouterr().out
    assert k.kernel_source in out and host in out
    k.export_sources(kernel_path=str(tmp_path / "k.src"), host_path=str(tmp_path / "h.txt"))
    assert (tmp_path / "k.src").read_text() == k.kernel_source and (tmp_path / "h.txt").read_text() == host
    k.print_source_code(file=str(tmp_path / "k2.src"))
    assert (tmp_path / "k2.src").read_text() == k.kernel_source
    with pytest.raises(TileLangArgumentError, match="which"):
        k.show_source("device")


def test_resource_members_and_ptx(tmp_path, capsys):
    k = tilelang.compile(scale_kernel(), target="cuda -arch=sm_80")
    assert k.n_regs == k.get_resource_usage()["registers"] > 0
    assert k.n_spills == 0 and k.n_max_threads == 128
    k.export_ptx(str(tmp_path / "k.ptx"))
    assert (tmp_path / "k.ptx").read_text() == k.get_ptx() and ".entry" in k.get_ptx()
    k.show_ptx()
    assert ".entry" in capsys.readouterr().out
    cpu = tilelang.compile(scale_kernel(), target="cpu")
    assert cpu.n_regs is None and cpu.n_spills is None and cpu.n_max_threads is None
    with pytest.raises(TileLangUnsupportedError, match="PTX exists only for target 'cuda'"):
        cpu.get_ptx()


@pytest.mark.skipif(find_cuobjdump() is None, reason="needs cuobjdump (the [sass] extra; scripts/setup.sh installs it)")
def test_sass(tmp_path):
    k = tilelang.compile(scale_kernel(), target="cuda -arch=sm_80")
    sass = k.get_sass()
    assert "FMUL" in sass and "EXIT" in sass
    k.export_sass(str(tmp_path / "k.sass"))
    assert (tmp_path / "k.sass").read_text() == sass


@pytest.mark.parametrize("target,magic", [("cpu", b"\x7fELF"), ("cuda -arch=sm_80", b"\x7fELF"), ("hip", b"\x7fELF")])
def test_export_library_writes_the_binary(target, magic, tmp_path):
    k = tilelang.compile(scale_kernel(), target=target)
    path = tmp_path / "kernel.bin"
    k.export_library(str(path))
    data = path.read_bytes()
    assert data == k.compiled.binary and data.startswith(magic)
    metal = tilelang.compile(scale_kernel(), target="metal")
    metal.export_library(str(tmp_path / "k.metal"))
    assert metal.compiled.binary_format == "msl" and b"kernel void" in (tmp_path / "k.metal").read_bytes()


def test_run_once_runs_on_the_profilers_inputs():
    k = tilelang.compile(scale_kernel(), out_idx=[1], target="cpu")
    out = k.run_once()
    prof = k.get_profiler()
    a, alpha = prof.get_inputs()
    np.testing.assert_array_equal(prof.run_once(), a * np.float32(alpha))
    assert isinstance(out, np.ndarray) and out.shape[1] == 64
