"""OpenCL sub-group reductions (cl_khr_subgroups, target feature "subgroups"). PoCL on this machine has no
sub-groups, so: the generated OpenCL C is compiled for real by clang (OpenCL C 2.0 with the extension) and
must contain the sub-group builtins; the numbers come from the emulator, which models sub-groups of several
sizes and two work-item mappings (the size and mapping are implementation-defined: the lowering may assume
neither); the feature-off path still runs on PoCL (tests/python/test_opencl.py), and asking PoCL for
sub-groups is a clear error.
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _ffi
from tilelang.errors import TileLangArgumentError, TileLangEmulationError, TileLangUnsupportedError
from tilelang.jit import opencl as jit_opencl

import kernels

SG = "opencl -mattr=+subgroups"
CLANG = shutil.which("clang") or shutil.which("clang-14")


def _rng():
    """A fresh seed per test (TL_TEST_SEED to replay one), printed so that a failure names it."""
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def f64(x):
    return np.asarray(x).astype(np.float64)


def clang_compile(source, tmp_path, std, subgroups):
    """(returncode, diagnostics) of clang compiling OpenCL C for SPIR (a full compile to LLVM IR: types,
    builtins and the extension pragma are all checked)."""
    path = tmp_path / "k.cl"
    path.write_text(source)
    cmd = [CLANG, f"-cl-std={std}", "-Xclang", "-finclude-default-header", "-target", "spir", "-c", "-emit-llvm",
           "-o", os.devnull, str(path)]
    if subgroups:
        cmd[1:1] = ["-Xclang", "-cl-ext=+cl_khr_subgroups"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr


def emulate(func, *args, size=32, strided=False, **cfg):
    k = tilelang.compile(func, target=SG, execution_backend="emulator",
                         pass_configs={"emulator.subgroup_size": size, "emulator.subgroup_strided": strided, **cfg})
    k(*args)
    return k


def _reduce_kernel(M, N, kind, dtype, threads=128, bm=None):
    """Y[i] = reduce_<kind>(X[i, :]) over blocks of bm rows (the last block partial when bm does not divide M)."""
    bm = bm or M
    red = getattr(T, f"reduce_{kind}")

    @T.prim_func
    def row_reduce(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            x = T.alloc_fragment((bm, N), dtype)
            s = T.alloc_fragment((bm,), dtype)
            T.copy(X[bx * bm, 0], x)
            red(x, s, dim=1)
            for i in T.Parallel(bm):
                if bx * bm + i < M:
                    Y[bx * bm + i] = s[i]

    return row_reduce


# ---- the target feature -----------------------------------------------------------------------------

@pytest.mark.parametrize("spec,canonical,features", [
    ("opencl", "opencl", []),
    (SG, SG, ["subgroups"]),
    ("opencl -mattr=+cl_khr_subgroups", SG, ["subgroups"]),
    ({"kind": "opencl", "features": ["subgroups"]}, SG, ["subgroups"]),
    ("opencl -mattr=-subgroups", "opencl -mattr=-subgroups", []),
])
def test_target_spellings(spec, canonical, features):
    t = tilelang.Target(spec)
    assert (str(t), list(t.features)) == (canonical, features)
    assert tilelang.Target(str(t)) == t


@pytest.mark.parametrize("spec,msg", [
    ("opencl -mattr=+fp16", "unknown OpenCL feature 'fp16'"),
    ({"kind": "opencl", "features": "subgroups"}, "is a list of names"),
])
def test_bad_feature_spellings(spec, msg):
    with pytest.raises(TileLangUnsupportedError, match=msg):
        tilelang.Target(spec)


def test_this_device_has_no_subgroups_and_plain_opencl_keeps_local_memory():
    """What clinfo says on this machine: PoCL 3.1 (CPU) reports OpenCL C 1.2, no cl_khr_subgroups and 'Max
    sub-groups per work group 0'. So target 'opencl' keeps the local-memory reduction here."""
    d = jit_opencl.device()
    print(d["platform"], "/", d["name"], "/", d["opencl_c_version"], "/ subgroups:", d["subgroups"])
    assert d["subgroups"] == ("cl_khr_subgroups" in d["extensions"] and not d["opencl_c_version"].startswith(
        ("OpenCL C 1.", "OpenCL C 0.")))
    if d["subgroups"]:
        pytest.skip("this OpenCL device has cl_khr_subgroups")
    k = tilelang.compile(kernels.softmax(16, 64, 8), target="opencl")
    assert str(k.target) == "opencl"
    assert "sub_group" not in k.get_kernel_source()
    assert any("no sub-groups: target feature 'subgroups' off" in c for c in k.choices)


def test_asking_a_device_without_subgroups_is_a_clear_error():
    d = jit_opencl.device()
    if d["subgroups"]:
        pytest.skip("this OpenCL device has cl_khr_subgroups")
    with pytest.raises(TileLangUnsupportedError) as e:
        tilelang.compile(kernels.softmax(16, 64, 8), target=SG)
    msg = str(e.value)
    assert f"target '{SG}' asks for sub-group reductions" in msg
    assert "cl_khr_subgroups" in msg and d["name"] in msg and "execution_backend='emulator'" in msg


# ---- the generated OpenCL C, compiled by clang --------------------------------------------------------

@pytest.mark.skipif(CLANG is None, reason="clang is not installed")
@pytest.mark.parametrize("name,func,builtins", [
    ("softmax", kernels.softmax(64, 128, 8), ["sub_group_reduce_max(", "sub_group_reduce_add("]),
    ("rms_norm fp16", kernels.rms_norm(32, 64, 4, dtype="float16"), ["sub_group_reduce_add("]),
    ("min int8", _reduce_kernel(16, 64, "min", "int8"), ["sub_group_reduce_min((int)("]),
    ("absmax float64", _reduce_kernel(16, 64, "absmax", "float64"), ["sub_group_reduce_max("]),
    ("sum int64", _reduce_kernel(16, 64, "sum", "int64"), ["sub_group_reduce_add("]),
])
def test_subgroup_source_compiles_with_clang(tmp_path, name, func, builtins):
    on = _ffi.codegen(func, SG, {})
    off = _ffi.codegen(func, "opencl", {})
    assert "#pragma OPENCL EXTENSION cl_khr_subgroups : enable" in on
    for b in builtins + ["get_sub_group_local_id()", "get_sub_group_id()", "get_num_sub_groups()"]:
        assert b in on, b
    assert "sub_group" not in off and "cl_khr_subgroups" not in off
    assert _ffi.codegen(func, "opencl -mattr=-subgroups", {}) == off
    rc, err = clang_compile(on, tmp_path, "CL2.0", subgroups=True)
    assert rc == 0, err
    rc, err = clang_compile(off, tmp_path, "CL1.2", subgroups=False)
    assert rc == 0, err
    # the check has teeth: without the extension the sub-group builtins are undeclared
    rc, err = clang_compile(on, tmp_path, "CL1.2", subgroups=False)
    assert rc != 0 and "sub_group_reduce_" in err


def test_kernel_choices_say_which_path():
    f = kernels.softmax(64, 128, 8)
    on = tilelang.compile(f, target=SG, execution_backend="emulator")
    assert sum("sub_group_reduce_" in c and "cl_khr_subgroups" in c for c in on.choices) == 2, on.choices
    off = tilelang.compile(f, target="opencl", execution_backend="emulator")
    assert not any("sub_group" in c for c in off.choices)
    # a row of an mma accumulator spans a quad of work-items: cl_khr_subgroups (no shuffles) cannot reduce it
    fa = tilelang.compile(kernels.flashattn(1, 1, 64, 32, False, block_M=64, block_N=64, dtype="float32"),
                          target=SG, execution_backend="emulator")
    assert any("a row spans 4 work-items" in c for c in fa.choices), fa.choices


# ---- numbers, in the emulator's sub-groups ----------------------------------------------------------

# (size, strided): 32 lanes; 1 (every work-item its own sub-group); 7 (does not divide 128: a smaller last
# sub-group); 64; strided 16 (sub-group g = work-items g, g + 8, ...: not consecutive ids)
SUBGROUPS = [(32, False), (1, False), (7, False), (64, False), (16, True)]


@pytest.mark.parametrize("size,strided", SUBGROUPS)
def test_softmax_and_rmsnorm_in_the_emulator(size, strided):
    rng = _rng()
    M, N = 20, 96  # 20 rows in blocks of 8: the last block is partial
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    emulate(kernels.softmax(M, N, 8), x, y, size=size, strided=strided)
    e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    emulate(kernels.rms_norm(M, N, 4), x, y, size=size, strided=strided)
    np.testing.assert_allclose(y, f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-12), rtol=1e-5)


@pytest.mark.parametrize("size,strided", SUBGROUPS)
@pytest.mark.parametrize("kind,dtype", [("sum", "int32"), ("max", "int8"), ("min", "float32"),
                                        ("abssum", "float32"), ("absmax", "int16")])
def test_reductions_in_the_emulator(size, strided, kind, dtype):
    rng = _rng()
    M, N = 13, 40  # ragged: 13 rows in blocks of 4, rows of 40 over 64 work-items
    if dtype.startswith("int"):
        hi = np.iinfo(dtype).max
        x = rng.integers(-hi, hi, (M, N)).astype(dtype)
    else:
        x = rng.standard_normal((M, N)).astype(dtype)
    y = np.zeros(M, dtype)
    emulate(_reduce_kernel(M, N, kind, dtype, threads=64, bm=4), x, y, size=size, strided=strided)
    a = x.astype(np.int64) if dtype.startswith("int") else f64(x)
    ref = {"sum": lambda: a.sum(1), "max": lambda: a.max(1), "min": lambda: a.min(1),
           "abssum": lambda: np.abs(a).sum(1), "absmax": lambda: np.abs(a).max(1)}[kind]()
    if dtype.startswith("int"):  # int32 sums wrap as the kernel's int32 adds do
        np.testing.assert_array_equal(y, ref.astype(dtype))
    else:
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_missing_barrier_is_a_race_in_the_emulator():
    rng = _rng()
    x = rng.standard_normal((8, 128)).astype(np.float32)
    y = np.zeros(8, np.float32)
    with pytest.raises(TileLangEmulationError, match="race"):
        emulate(_reduce_kernel(8, 128, "sum", "float32"), x, y, **{"tl.disable_barrier_insertion": True})


def test_emulated_subgroup_size_is_checked():
    with pytest.raises(TileLangArgumentError, match="'emulator.subgroup_size' takes a positive integer, got '0'"):
        emulate(kernels.softmax(16, 64, 8), np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32), size=0)


def test_the_subgroup_lowering_does_not_depend_on_the_size():
    """The lowered IR is one program for every sub-group size: the size is a property of the device that
    the kernel reads at run time (get_num_sub_groups), never a constant of the lowering."""
    src = _ffi.codegen(kernels.softmax(64, 128, 8), SG, {})
    assert re.search(r"for \(int w = 0; w < 0 \+ \(\(int\)get_num_sub_groups\(\)\); \+\+w\)", src), src
    assert "get_sub_group_size" not in src and "get_max_sub_group_size" not in src
