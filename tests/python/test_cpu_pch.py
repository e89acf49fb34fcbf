"""The CPU backend reads its device headers (tl_device/cpu/runtime.h) precompiled: with g++ -O3, parsing them is
most of a small kernel's build (1.8 s of 1.9 s on a Zen 3; 0.35 s with the precompiled header). One header is
built per compiler, flag set and ISA level, in TILELANG_CPU_PCH_DIR (default <cache>/cpu-pch), and every kernel of
that combination includes it. Checked here: kernels built with it are right (NumPy float64, seeded), the compiler
is really given it (a wrapper CXX records the command lines), a damaged one (truncated: a hard error for GCC) is
removed and the kernel still builds, TILELANG_CPU_PCH=0 and a disabled cache build none."""
import os
import stat

import pytest

import tilelang
from tilelang.errors import TileLangUnsupportedError
from tilelang.jit import clear_compile_memo

from test_cpu_runtime import _cache_kernel, _check_cache_kernel


# the disk-cache tests' kernel: B = A * c + 1, distinct for each c, and its NumPy float64 check
_scale, _check = _cache_kernel, _check_cache_kernel


def _gch(root):
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".gch"))


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """A fresh cache and PCH directory, and a CXX that records each command line before running g++."""
    log = tmp_path / "commands.log"
    cxx = tmp_path / "cxx"
    cxx.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec g++ "$@"\n')
    cxx.chmod(cxx.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CXX", str(cxx))
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILELANG_CPU_PCH_DIR", str(tmp_path / "pch"))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("TILELANG_CPU_PCH", raising=False)
    clear_compile_memo()
    yield tmp_path, lambda: [line for line in log.read_text().splitlines() if "kernel.cc" in line]
    clear_compile_memo()


def test_kernels_include_one_precompiled_header(recorded):
    tmp, kernel_builds = recorded
    k1 = tilelang.compile(_scale(2.0), target="cpu")
    k2 = tilelang.compile(_scale(3.0), target="cpu")
    _check(k1, 2.0)
    _check(k2, 3.0)
    (gch,) = _gch(tmp / "pch")  # one combination of compiler, flags and ISA: one header
    builds = kernel_builds()
    assert len(builds) == 2
    for line in builds:
        assert f"-include {gch[:-len('.gch')]}" in line, line
    # another ISA level is another header
    k3 = tilelang.compile(_scale(4.0), target="cpu -mcpu=x86-64")
    _check(k3, 4.0)
    assert len(_gch(tmp / "pch")) == 2


def test_a_damaged_precompiled_header_is_removed_and_the_kernel_still_builds(recorded):
    tmp, kernel_builds = recorded
    _check(tilelang.compile(_scale(5.0), target="cpu"), 5.0)
    (gch,) = _gch(tmp / "pch")
    with open(gch, "r+b") as f:
        f.truncate(100000)  # GCC stops with "cannot read PCH file" on a truncated one
    _check(tilelang.compile(_scale(6.0), target="cpu"), 6.0)
    assert not os.path.exists(gch), "the damaged header was left for the next kernel"
    builds = kernel_builds()
    assert "-include" in builds[-2] and "-include" not in builds[-1], "the retry is a plain build"
    _check(tilelang.compile(_scale(7.0), target="cpu"), 7.0)  # and the next kernel makes a new one
    assert _gch(tmp / "pch") == [gch]
    assert "-include" in kernel_builds()[-1]


def test_no_precompiled_header_when_turned_off_or_without_a_cache(recorded, monkeypatch):
    tmp, kernel_builds = recorded
    monkeypatch.setenv("TILELANG_CPU_PCH", "0")
    _check(tilelang.compile(_scale(8.0), target="cpu"), 8.0)
    assert _gch(tmp) == [] and "-include" not in kernel_builds()[-1]
    monkeypatch.setenv("TILELANG_CPU_PCH", "maybe")  # a value it does not know is refused, not taken for "on"
    with pytest.raises(TileLangUnsupportedError, match="TILELANG_CPU_PCH='maybe'"):
        tilelang.compile(_scale(8.5), target="cpu")
    monkeypatch.delenv("TILELANG_CPU_PCH")
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    _check(tilelang.compile(_scale(9.0), target="cpu"), 9.0)
    assert _gch(tmp) == [] and "-include" not in kernel_builds()[-1]
