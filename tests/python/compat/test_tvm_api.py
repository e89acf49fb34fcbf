"""`tilelang.tvm`: the TVM names TileLang programs use (tvm.DataType, tvm.tir / tvm.tirx expression
builders, tvm.target.Target, tvm.testing), a bare `import tvm` where no TVM is installed (never shadowing
a real one), and a clear error for TVM's machinery this project does not have. The dequantisation kernel
is written in the style of TileLang's examples (helpers built with tirx outside the kernel) and run on
the CPU target and in the CUDA emulator against NumPy."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import tvm
from tilelang.errors import TileLangUnsupportedError

SEED = 77


def test_datatype():
    from tilelang.tvm import DataType

    assert DataType("float16").bits == 16 and DataType(T.bfloat16).bits == 16 and DataType("int4").bits == 4
    assert DataType("float16x4").lanes == 4 and DataType("float16x4").bits == 16
    assert DataType("float16") == "float16" and DataType("float16") == T.float16
    assert DataType("uint8").type_code == 1 and DataType("float32").is_float()
    assert str(DataType("float16").with_lanes(8)) == "float16x8"
    from tilelang import DataType as FromTop  # TileLang re-exports TVM's DataType

    assert FromTop is DataType


def test_expression_builders():
    tir = tvm.tir
    assert tvm.tirx is tir
    c = tir.const(3, T.uint16)
    assert c.dtype == "uint16" and isinstance(c, tir.IntImm) and isinstance(c, tir.PrimExpr)
    assert tir.const(1.5).dtype == "float32" and not isinstance(tir.const(1.5), tir.IntImm)
    assert isinstance(tir.const(1.5), tir.FloatImm)
    assert tir.Cast(T.float32, c).dtype == "float32"
    r = tir.reinterpret(T.float16, tir.const(0x3C00, T.uint16))  # TVM's order: dtype first
    assert r.dtype == "float16"
    assert tir.Select(c > 1, tir.const(1, "int32"), tir.const(2, "int32")).dtype == "int32"
    assert tir.Min(c, tir.const(7, T.uint16)).dtype == "uint16"
    v = tir.Var("n", "int32")
    assert isinstance(v, tir.Var) and not isinstance(c, tir.Var)
    assert tir.all(v > 0, v < 8).dtype == "bool" and tir.op.exp is tir.exp
    assert tvm.target.Target("llvm").kind.name == "cpu"
    assert str(tvm.target.Target("hip -mcpu=gfx942")) == str(tilelang.Target("hip -arch=gfx942"))


def _u8_to_i4_to_f16(val, pos):
    """A signed int4 field `pos` of a uint8 as float16: shift, mask, sign-extend through a Select."""
    tirx = tvm.tirx
    f4 = (val >> (pos.astype(T.uint8) * tirx.const(4, T.uint8))) & tirx.const(0xF, T.uint8)
    signed = tirx.Select(f4 >= tirx.const(8, T.uint8), tirx.Cast(T.int32, f4) - tirx.const(16, T.int32),
                         tirx.Cast(T.int32, f4))
    return tirx.Cast(T.float16, signed)


def _f16_bits_halved(x):
    """x / 2 for a normal float16 by decrementing its exponent through reinterpret (TVM's argument order)."""
    tirx = tvm.tirx
    bits = tirx.reinterpret(T.uint16, x)
    return tirx.reinterpret(T.float16, bits - tirx.const(0x0400, T.uint16))


def dequant(N, K):
    @T.prim_func
    def k(Q: T.Tensor((N, K // 2), "uint8"), S: T.Tensor((N,), "float16"), W: T.Tensor((N, K), "float16")):
        with T.Kernel(T.ceildiv(N, 4), threads=128) as bx:
            for i, j in T.Parallel(4, K):
                if bx * 4 + i < N:
                    w = _u8_to_i4_to_f16(Q[bx * 4 + i, j // 2], j % 2) * S[bx * 4 + i]
                    W[bx * 4 + i, j] = w

    return k


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_int4_dequant_with_tirx_helpers(where):
    N, K = 10, 48  # N ragged against 4 rows per block
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    q = rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    s = (rng.random(N) + 0.5).astype(np.float16)
    w = np.zeros((N, K), np.float16)
    kern = (tilelang.compile(dequant(N, K), target="cpu") if where == "cpu" else
            tilelang.compile(dequant(N, K), target="cuda", execution_backend="emulator"))
    kern(q, s, w)
    lo, hi = (q & 0xF).astype(np.int64), (q >> 4).astype(np.int64)
    ints = np.stack([lo, hi], axis=-1).reshape(N, K)
    ints = np.where(ints >= 8, ints - 16, ints)
    want = (ints.astype(np.float64) * s.astype(np.float64)[:, None]).astype(np.float16)
    np.testing.assert_array_equal(w, want)


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_reinterpret_in_tvm_order(where):
    @T.prim_func
    def k(X: T.Tensor((64,), "float16"), Y: T.Tensor((64,), "float16")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                Y[i] = _f16_bits_halved(X[i])

    x = (np.random.default_rng(SEED).random(64) * 8 + 1).astype(np.float16)
    y = np.zeros_like(x)
    (tilelang.compile(k, target="cpu") if where == "cpu" else
     tilelang.compile(k, target="cuda", execution_backend="emulator"))(x, y)
    np.testing.assert_array_equal(y, x / np.float16(2))


def test_names_tvm_has_and_this_project_does_not():
    with pytest.raises(TileLangUnsupportedError, match="tvm.tir.transform is not supported.*pass infrastructure"):
        tvm.tir.transform
    with pytest.raises(TileLangUnsupportedError, match="tvm.IRModule"):
        tvm.IRModule
    assert not hasattr(tvm, "__wrapped__")  # private names stay AttributeErrors


def _python(code, extra_path=None):
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=120)


def test_bare_import_tvm_without_a_tvm_installed():
    r = _python("""
        import importlib.util, sys
        assert importlib.util.find_spec("tvm") is None or "tilelang" in repr(importlib.util.find_spec("tvm"))
        import tilelang
        import tvm
        from tvm import tirx, DataType
        from tvm.target import Target
        import tvm.tirx
        assert DataType("float16").bits == 16 and tirx.const(1, "int32").dtype == "int32"
        assert Target("llvm").kind.name == "cpu"
        try:
            import tvm.te
        except tilelang.errors.TileLangUnsupportedError as e:
            print("refused:", e)
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout and "refused: 'tvm.te' is TVM's" in r.stdout


def test_a_real_tvm_is_never_shadowed(tmp_path):
    pkg = tmp_path / "tvm"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("REAL = True\n")
    r = _python("""
        import tilelang
        import tvm
        print("real" if getattr(tvm, "REAL", False) else "alias")
    """, extra_path=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "real"
