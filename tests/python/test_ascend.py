"""The Ascend backend (docs/ascend.md). There is no Ascend compiler or runtime here (CANN ships with Huawei's
toolkit), so every kernel compiled here for target "ascend" is (a) checked by clang against our declarations of
the public AscendC API (include/tl_device/ascend_check/kernel_operator.h) and (b) run in the emulator, each pipe
a queue of its own with the data formats of the AscendC guide, against NumPy in float64.
"""
import os
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangEmulationError, TileLangResourceError, TileLangUnsupportedError
from tilelang.jit import ascend as jit_ascend

ARCHS = ["dav-c220", "dav-c310"]


def _rng():
    """A fresh seed per test (TL_TEST_SEED to replay one), printed so that a failure names it."""
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def f64(x):
    return np.asarray(x).astype(np.float64)


def ascend(func, arch="dav-c220", **kw):
    """Compiles for Ascend; the generated AscendC must pass the clang check (every kernel of this file goes
    through here)."""
    k = tilelang.compile(func, target="ascend -arch=" + arch, **kw)
    ok, err = jit_ascend.check_source(k.get_kernel_source())
    assert ok, "the generated AscendC does not pass the clang check:\n" + err + "\n" + k.get_kernel_source()
    return k


def emu(func, arch="dav-c220", **kw):
    ascend(func, arch)  # the source of the same kernel passes the check
    return ascend(func, arch, execution_backend="emulator", **kw)


def gemm(M, N, K, BM=64, BN=64, BK=32, dtype="float16", out="float16", trans_A=False, trans_B=False):
    a_shape = (K, M) if trans_A else (M, K)
    b_shape = (N, K) if trans_B else (K, N)
    as_shape = (BK, BM) if trans_A else (BM, BK)
    bs_shape = (BN, BK) if trans_B else (BK, BN)

    @T.prim_func
    def mm(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), out)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_s = T.alloc_shared(as_shape, dtype)
            B_s = T.alloc_shared(bs_shape, dtype)
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                if trans_A:
                    T.copy(A[k * BK, by * BM], A_s)
                else:
                    T.copy(A[by * BM, k * BK], A_s)
                if trans_B:
                    T.copy(B[bx * BN, k * BK], B_s)
                else:
                    T.copy(B[k * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(C_l, C[by * BM, bx * BN])

    return mm


def _half(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "bfloat16":
        import ml_dtypes
        return x.astype(ml_dtypes.bfloat16)
    return x.astype(np.float16)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("M,N,K", [(128, 128, 64), (200, 136, 72), (17, 33, 20)])
def test_gemm_matches_numpy(arch, M, N, K):
    rng = _rng()
    k = emu(gemm(M, N, K), arch)
    a, b = _half(rng, (M, K), "float16"), _half(rng, (K, N), "float16")
    c = np.full((M, N), np.nan, np.float16)
    k(a, b, c)
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("trans_A,trans_B", [(True, False), (False, True), (True, True)])
def test_transposed_operands(arch, trans_A, trans_B):
    M, N, K = 72, 80, 56
    rng = _rng()
    k = emu(gemm(M, N, K, BM=32, BN=48, BK=32, trans_A=trans_A, trans_B=trans_B), arch)
    a = _half(rng, (K, M) if trans_A else (M, K), "float16")
    b = _half(rng, (N, K) if trans_B else (K, N), "float16")
    c = np.zeros((M, N), np.float16)
    k(a, b, c)
    ref = (f64(a).T if trans_A else f64(a)) @ (f64(b).T if trans_B else f64(b))
    np.testing.assert_allclose(f64(c), ref, rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("dtype,out", [("bfloat16", "float32"), ("float16", "float32"), ("bfloat16", "bfloat16")])
def test_gemm_types(dtype, out):
    M, N, K = 96, 64, 48
    rng = _rng()
    k = emu(gemm(M, N, K, dtype=dtype, out=out))
    a, b = _half(rng, (M, K), dtype), _half(rng, (K, N), dtype)
    odt = {"float32": np.float32, "bfloat16": None}[out] if out != "bfloat16" else None
    if out == "bfloat16":
        import ml_dtypes
        c = np.zeros((M, N), ml_dtypes.bfloat16)
    else:
        c = np.zeros((M, N), odt)
    k(a, b, c)
    tol = 1e-5 if out == "float32" else 1e-2
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b), rtol=tol, atol=tol * 4)


def test_the_source_has_the_instructions_and_flags_meant():
    src = ascend(gemm(200, 136, 72)).get_kernel_source()
    for needed in ["extern \"C\" __global__ __aicore__ void mm(GM_ADDR A_gm, GM_ADDR B_gm, GM_ADDR C_gm)",
                   "AscendC::TBuf<AscendC::TPosition::A1> A_s_buf;", "AscendC::TBuf<AscendC::TPosition::CO1> C_l_buf;",
                   "AscendC::DataCopy(A_s,", "AscendC::Nd2NzParams tl_p;", "AscendC::LoadData(l0a",
                   "p.ifTranspose = true;", "AscendC::Mmad(C_l, l0a, l0b, tl_p);", "p.cmatrixInitVal = ",
                   "p.quantPre = QuantMode_t::F322F16;", "AscendC::Fixpipe(C["]:
        assert needed in src, needed
    # the pipes the flags order: copies before loads, loads before the cube, the next iteration's copy after
    # the loads of this one, the next loads after this Mmad, the result after the last Mmad
    flags = re.findall(r"SetFlag<AscendC::HardEvent::(\w+)>", src)
    assert sorted(set(flags)) == sorted(["M_FIX", "M_MTE1", "MTE1_M", "MTE1_MTE2", "MTE2_MTE1"]), flags
    for f in flags:
        assert src.count(f"SetFlag<AscendC::HardEvent::{f}>") == src.count(f"WaitFlag<AscendC::HardEvent::{f}>")
    # the loads' flags are outside their fractal loops (once per K step, not per fractal)
    loop = src.index("for (int32_t mb = 0;")
    assert src.rindex("WaitFlag<AscendC::HardEvent::M_MTE1>", 0, loop) > src.rindex("for (int32_t k_trip = 0;", 0, loop)
    assert "Flag" not in src[loop:src.index("}", src.index("AscendC::LoadData(l0a", loop))]
    # T.Pipelined(num_stages=2): ping-pong tiles and L0 buffers, two K steps per trip; the second step's loads
    # into the other L0 buffers need no flag from the cube (which still multiplies the first step's)
    for b in ["A_s_pong", "B_s_pong", "l0a_pong", "l0b_pong"]:
        assert f"AscendC::LocalTensor<half> {b} = " in src, b
    second = src.index("AscendC::LoadData(l0a_pong")
    first_mmad = src.index("AscendC::Mmad(C_l, l0a, l0b, tl_p);")
    assert first_mmad < second and "M_MTE1" not in src[first_mmad:second]
    assert "AscendC::Mmad(C_l, l0a_pong, l0b_pong, tl_p);" in src


def test_the_clang_check_catches_a_wrong_api_use():
    src = ascend(gemm(64, 64, 32)).get_kernel_source()
    assert jit_ascend.check_source(src)[0]
    ok, err = jit_ascend.check_source(src.replace("p.ifTranspose", "p.ifTranspos"))
    assert not ok and "ifTranspos" in err
    ok, err = jit_ascend.check_source(src.replace("HardEvent::MTE1_M>", "HardEvent::MTE1_MX>"))
    assert not ok and "MTE1_MX" in err


def test_without_the_flags_the_emulator_reports_the_cross_pipe_races():
    k = ascend(gemm(64, 64, 64), execution_backend="emulator", pass_configs={"tl.test_skip_ascend_sync": True})
    assert "SetFlag" not in k.get_kernel_source()
    a = np.ones((64, 64), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, a, np.zeros_like(a))
    kinds = {kind for kind, _ in e.value.reports}
    assert kinds == {"race"}, e.value.reports
    msg = e.value.reports[0][1]
    assert "pipe MTE1 reads 'A_s'" in msg and "pipe MTE2's write of it" in msg and "test_ascend.py" in msg, msg


def test_l0c_over_capacity_is_an_error_with_the_buffer_table():
    with pytest.raises(TileLangResourceError) as e:
        ascend(gemm(512, 512, 64, BM=256, BN=256, BK=64))  # a 256 x 256 float32 accumulator: 256 KB of L0C
    msg = str(e.value)
    assert "L0C: 262144 of 131072 bytes" in msg and "C_l" in msg and "dav-c220" in msg, msg
    ascend(gemm(512, 512, 64, BM=256, BN=256, BK=64), "dav-c310")  # the 950's L0C holds it


def test_unknown_arch_and_ops_not_lowered_are_clear_errors():
    with pytest.raises(TileLangUnsupportedError, match="dav-c999"):
        ascend(gemm(64, 64, 32), "dav-c999")

    @T.prim_func
    def cs(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            s = T.alloc_shared((64, 64), "float32")
            T.copy(A, s)
            T.cumsum(s, dim=1)
            T.copy(s[0, :], B)

    with pytest.raises(TileLangUnsupportedError, match="does not lower T.cumsum"):
        ascend(cs)


def test_the_launch_points_at_the_emulator():
    k = ascend(gemm(64, 64, 32))
    a = np.ones((64, 32), np.float16)
    with pytest.raises(TileLangUnsupportedError, match="execution_backend=\"emulator\""):
        k(a, np.ones((32, 64), np.float16), np.zeros((64, 64), np.float16))


def elementwise(M, N, BM, BN, dtype="float16"):
    @T.prim_func
    def ew(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), Z: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=1) as (bx, by):
            x = T.alloc_shared((BM, BN), dtype)
            y = T.alloc_shared((BM, BN), dtype)
            z = T.alloc_fragment((BM, BN), dtype)
            T.copy(X[by * BM, bx * BN], x)
            T.copy(Y[by * BM, bx * BN], y)
            for i, j in T.Parallel(BM, BN):
                z[i, j] = T.max(x[i, j] * y[i, j] + 0.5, x[i, j] - 1.0) + T.exp(y[i, j]) / x[i, j]
            T.copy(z, Z[by * BM, bx * BN])

    return ew


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("M,N", [(64, 96), (50, 70)])
def test_elementwise_on_the_vector_unit(arch, M, N):
    rng = _rng()
    k = emu(elementwise(M, N, 16, 48, "float32"), arch)
    x = rng.uniform(0.5, 2.0, (M, N)).astype(np.float32)
    y = rng.standard_normal((M, N)).astype(np.float32)
    z = np.full((M, N), np.nan, np.float32)
    k(x, y, z)
    xd, yd = f64(x), f64(y)
    np.testing.assert_allclose(z, np.maximum(xd * yd + 0.5, xd - 1.0) + np.exp(yd) / xd, rtol=1e-5, atol=1e-5)
    src = k.get_kernel_source()
    for op in ["AscendC::DataCopyPad(x,", "AscendC::Mul(", "AscendC::Adds(", "AscendC::Max(", "AscendC::Exp(",
               "AscendC::Div(", "AscendC::DataCopyPad(Z["]:
        assert op in src, op
    assert "SetFlag<AscendC::HardEvent::MTE2_V>" in src and "SetFlag<AscendC::HardEvent::V_MTE3>" in src


def softmax_kernel(M, N, BM, dtype="float32"):
    @T.prim_func
    def softmax(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, BM), threads=1) as bx:
            x = T.alloc_shared((BM, N), dtype)
            m = T.alloc_fragment((BM,), dtype)
            s = T.alloc_fragment((BM,), dtype)
            T.copy(X[bx * BM, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(BM, N):
                x[i, j] = T.exp(x[i, j] - m[i])
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(BM, N):
                x[i, j] = x[i, j] / s[i]
            T.copy(x, Y[bx * BM, 0])

    return softmax


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("M,N,BM", [(64, 128, 16), (50, 72, 16)])
def test_softmax(arch, M, N, BM):
    rng = _rng()
    k = emu(softmax_kernel(M, N, BM), arch)
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    y = np.full_like(x, np.nan)
    k(x, y)
    e = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    src = k.get_kernel_source()
    # row maxima and sums on the vector unit, one value per 32-byte block; the scalar unit reads each row's
    # value after the vector unit's flag
    assert "AscendC::ReduceMax(m[(r * 8)]" in src and "AscendC::ReduceSum(s[" in src, src
    assert "SetFlag<AscendC::HardEvent::V_S>" in src and "m.GetValue(" in src and "AscendC::Exp(" in src


def rmsnorm_kernel(M, N, BM, eps=1e-6):
    @T.prim_func
    def rms(X: T.Tensor((M, N), "float32"), W: T.Tensor((N,), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, BM), threads=1) as bx:
            x = T.alloc_shared((BM, N), "float32")
            w = T.alloc_shared((N,), "float32")
            x2 = T.alloc_fragment((BM, N), "float32")
            ss = T.alloc_fragment((BM,), "float32")
            T.copy(X[bx * BM, 0], x)
            T.copy(W, w)
            for i, j in T.Parallel(BM, N):
                x2[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x2, ss, dim=1)
            for i, j in T.Parallel(BM, N):
                x[i, j] = x[i, j] * T.rsqrt(ss[i] / N + eps) * w[j]
            T.copy(x, Y[bx * BM, 0])

    return rms


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("M,N,BM", [(32, 256, 8), (37, 96, 8)])
def test_rmsnorm(arch, M, N, BM):
    rng = _rng()
    k = emu(rmsnorm_kernel(M, N, BM), arch)
    x = rng.standard_normal((M, N)).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    y = np.full_like(x, np.nan)
    k(x, w, y)
    xd = f64(x)
    np.testing.assert_allclose(y, xd / np.sqrt((xd**2).mean(1, keepdims=True) + 1e-6) * f64(w), rtol=1e-5, atol=1e-6)
    assert "AscendC::Rsqrt(" in k.get_kernel_source()


def test_row_values_read_too_early_are_races():
    """Without the flags the scalar unit reads a row maximum the vector unit has not written yet."""
    k = ascend(softmax_kernel(16, 64, 16), execution_backend="emulator", pass_configs={"tl.test_skip_ascend_sync": True})
    x = np.ones((16, 64), np.float32)
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros_like(x))
    msgs = [m for kind, m in e.value.reports if kind == "race"]
    assert any("pipe S reads 'm'" in m and "pipe V's write of it" in m for m in msgs), e.value.reports


def placed_gemm(a_alloc="alloc_L1", c_alloc="alloc_L0C"):
    @T.prim_func
    def mm(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = getattr(T, a_alloc)((64, 32), "float16")
            B_s = T.alloc_L1((32, 64), "float16")
            C_l = getattr(T, c_alloc)((64, 64), "float32")
            T.clear(C_l)
            for k in T.serial(2):
                T.copy(A[0, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[0, 0])

    return mm


def test_tilelang_ascend_scopes_place_tiles_and_other_targets_keep_theirs():
    """T.alloc_L1 / T.alloc_L0C / T.alloc_ub (TileLang-Ascend's explicit scopes) place the tile on Ascend;
    on other targets they are shared memory and fragments."""
    rng = _rng()
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    ref = f64(a) @ f64(b)
    k = emu(placed_gemm())
    src = k.get_kernel_source()
    assert "AscendC::TBuf<AscendC::TPosition::A1> A_s_buf;" in src and "TPosition::CO1> C_l_buf;" in src
    for kw in [dict(target="ascend", execution_backend="emulator"), dict(target="cuda -arch=sm_80",
                                                                         execution_backend="emulator"),
               dict(target="cpu")]:
        c = np.zeros((64, 64), np.float32)
        tilelang.compile(placed_gemm(), **kw)(a, b, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4, err_msg=str(kw))
    with pytest.raises(TileLangUnsupportedError, match="global memory into L0A tile 'A_s': L0A is filled from L1"):
        ascend(placed_gemm(a_alloc="alloc_L0A"))
    with pytest.raises(TileLangUnsupportedError, match="'A_s' is placed in UB but its use needs L1"):
        ascend(placed_gemm(a_alloc="alloc_ub"))


def expert_gemm(M, N, K, BM, BN, BK, trans_B, lower_case=False):
    """TileLang-Ascend's expert style: the program stages operands GM -> L1 -> L0A / L0B itself."""
    L1, L0A, L0B, L0C = ((T.alloc_l1, T.alloc_l0a, T.alloc_l0b, T.alloc_l0c) if lower_case else
                         (T.alloc_L1, T.alloc_L0A, T.alloc_L0B, T.alloc_L0C))
    b_shape = (N, K) if trans_B else (K, N)
    bt = (BN, BK) if trans_B else (BK, BN)

    @T.prim_func
    def mm(A: T.Tensor((M, K), "float16"), B: T.Tensor(b_shape, "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            a_l1 = L1((BM, BK), "float16")
            b_l1 = L1(bt, "float16")
            a_l0 = L0A((BM, BK), "float16")
            b_l0 = L0B(bt, "float16")
            acc = L0C((BM, BN), "float32")
            for k in T.serial(T.ceildiv(K, BK)):
                T.copy(A[by * BM, k * BK], a_l1)
                if trans_B:
                    T.copy(B[bx * BN, k * BK], b_l1)
                else:
                    T.copy(B[k * BK, bx * BN], b_l1)
                T.copy(a_l1, a_l0)
                T.copy(b_l1, b_l0)
                T.gemm(a_l0, b_l0, acc, transpose_B=trans_B, clear_accum=k == 0)
            T.copy(acc, C[by * BM, bx * BN])

    return mm


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("M,N,K,trans_B", [(31, 19, 47, True), (64, 96, 64, False), (40, 72, 100, True)])
def test_operands_the_program_loads_into_l0a_and_l0b(arch, M, N, K, trans_B):
    """T.alloc_L0A / T.alloc_L0B with T.copy from L1 (TileLang-Ascend's expert mode): the copy is the LoadData
    into the fractal layout the T.gemm reading the tile needs, and the T.gemm is the Mmad alone."""
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(np.float16)
    prog = expert_gemm(M, N, K, 32, 32, 32, trans_B, lower_case=trans_B)
    k = emu(prog, arch)
    src = k.get_kernel_source()
    assert "TBuf<AscendC::TPosition::A2> a_l0_buf;" in src and "TBuf<AscendC::TPosition::B2> b_l0_buf;" in src
    assert "AscendC::LoadData(a_l0" in src and "AscendC::Mmad(acc, a_l0, b_l0, tl_p);" in src
    assert "l0a_buf" not in src  # no L0 buffer of the lowering's own
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    ref = f64(a) @ (f64(b).T if trans_B else f64(b))
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)
    # the same program on the CPU target (the scopes are shared memory there)
    c2 = np.zeros((M, N), np.float32)
    tilelang.compile(prog, target="cpu")(a, b, c2)
    np.testing.assert_allclose(c2, ref, rtol=1e-5, atol=1e-4)


def test_l0a_tiles_used_wrongly_are_clear_errors():
    @T.prim_func
    def both(A: T.Tensor((32, 32), "float16"), C: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            a_l1 = T.alloc_L1((32, 32), "float16")
            a_l0 = T.alloc_L0A((32, 32), "float16")
            b_l1 = T.alloc_L1((32, 32), "float16")
            acc = T.alloc_L0C((32, 32), "float32")
            T.copy(A[0, 0], a_l1)
            T.copy(A[0, 0], b_l1)
            T.copy(a_l1, a_l0)
            T.gemm(a_l0, b_l1, acc, clear_accum=True)
            T.gemm(a_l0, b_l1, acc, transpose_A=True)
            T.copy(acc, C[0, 0])

    with pytest.raises(TileLangUnsupportedError, match="'a_l0' is used by T.gemm both transposed and not"):
        ascend(both)

    @T.prim_func
    def unread(A: T.Tensor((32, 32), "float16"), C: T.Tensor((32, 32), "float16")):
        with T.Kernel(1) as bx:
            a_l1 = T.alloc_L1((32, 32), "float16")
            a_l0 = T.alloc_L0B((32, 32), "float16")
            T.copy(A[0, 0], a_l1)
            T.copy(a_l1, a_l0)

    with pytest.raises(TileLangUnsupportedError, match="'a_l0' is placed in L0B but no T.gemm reads it"):
        ascend(unread)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("K", [64, 160, 224])
def test_three_stage_pipeline(arch, K):
    """T.Pipelined(num_stages=3): three buffers of each loop tile, three K steps per trip (the last trip
    partial when the step count is not a multiple of 3), and the flags keep the pipes race-free."""
    rng = _rng()
    M, N = 64, 64

    @T.prim_func
    def mm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 1) as (bx, by):
            A_s = T.alloc_shared((M, 32), "float16")
            B_s = T.alloc_shared((32, N), "float16")
            C_l = T.alloc_fragment((M, N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // 32, num_stages=3):
                T.copy(A[0, k * 32], A_s)
                T.copy(B[k * 32, 0], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[0, 0])

    k = emu(mm, arch)
    src = k.get_kernel_source()
    for b in ["A_s_pong", "A_s_stage2", "B_s_stage2", "l0a_pong"]:
        assert f"{b}_buf;" in src, b
    assert not any("num_stages" in w for w in k.warnings), k.warnings
    assert any("3 buffers each" in c for c in k.choices), k.choices
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, f64(a) @ f64(b), rtol=1e-5, atol=1e-4)


def int8_gemm(M, N, K, trans_B=True, BM=64, BN=64, BK=64):
    b_shape, bs_shape = ((N, K), (BN, BK)) if trans_B else ((K, N), (BK, BN))

    @T.prim_func
    def mm(A: T.Tensor((M, K), "int8"), B: T.Tensor(b_shape, "int8"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "int8")
            B_s = T.alloc_shared(bs_shape, "int8")
            C_l = T.alloc_fragment((BM, BN), "int32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                if trans_B:
                    T.copy(B[bx * BN, k * BK], B_s)
                else:
                    T.copy(B[k * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=trans_B)
            T.copy(C_l, C[by * BM, bx * BN])

    return mm


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (100, 72, 200), (17, 33, 40)])
def test_int8_gemm_accumulates_exactly_in_int32(arch, M, N, K):
    """int8 x int8 -> int32 on the cube: 16 x 32-byte fractals (32 k a row), B stored n x k; exact against
    NumPy's int64 product at ragged sizes."""
    rng = _rng()
    k = emu(int8_gemm(M, N, K), arch)
    assert "AscendC::LocalTensor<int8_t>" in k.get_kernel_source()
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (N, K)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64).T)


def test_int8_gemm_with_b_stored_k_by_n_is_refused_with_the_reason():
    with pytest.raises(TileLangUnsupportedError, match="int8 on Ascend takes A as m x k and B as n x k"):
        ascend(int8_gemm(64, 64, 64, trans_B=False))


def staged_gemm(M, N, K, BM=32, BN=32, BK=32):
    """TileLang-Ascend's expert style with a leading stage dimension: tiles [2, rows, cols], stage k % 2."""
    @T.prim_func
    def mm(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            a_l1 = T.alloc_L1((2, BM, BK), "float16")
            b_l1 = T.alloc_L1((2, BN, BK), "float16")
            a_l0 = T.alloc_L0A((2, BM, BK), "float16")
            b_l0 = T.alloc_L0B((2, BN, BK), "float16")
            acc = T.alloc_L0C((BM, BN), "float32")
            for k in T.serial(T.ceildiv(K, BK)):
                T.copy(A[by * BM, k * BK], a_l1[k % 2, :, :])
                T.copy(B[bx * BN, k * BK], b_l1[k % 2, :, :])
                T.copy(a_l1[k % 2, :, :], a_l0[k % 2, :, :])
                T.copy(b_l1[k % 2, :, :], b_l0[k % 2, :, :])
                T.gemm(a_l0[k % 2, :, :], b_l0[k % 2, :, :], acc, transpose_B=True, clear_accum=k == 0)
            T.copy(acc, C[by * BM, bx * BN])

    return mm


@pytest.mark.parametrize("arch", ARCHS)
def test_tiles_with_a_stage_dimension(arch):
    """A tile [S, rows, cols] is S tiles; a statement whose stage is a run-time index (k % 2) is one copy per
    stage under `if k % 2 == s`: a GEMM through staged L1 / L0A / L0B tiles, and staged Unified-Buffer tiles in a
    T.Parallel loop; the same programs on the CPU target."""
    rng = _rng()
    M, N, K = 40, 72, 100
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    ref = f64(a) @ f64(b).T
    k = emu(staged_gemm(M, N, K), arch)
    src = k.get_kernel_source()
    assert "TPosition::A2> a_l0_1_buf;" in src and "TPosition::A1> b_l1_0_buf;" in src
    for kern in (k, tilelang.compile(staged_gemm(M, N, K), target="cpu")):
        c = np.zeros((M, N), np.float32)
        kern(a, b, c)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)

    R, C, steps = 16, 64, 3

    @T.prim_func
    def scale(X: T.Tensor((R * steps, C), "float32"), Y: T.Tensor((R * steps, C), "float32")):
        with T.Kernel(1) as bx:
            x = T.alloc_ub((2, R, C), "float32")
            y = T.alloc_ub((2, R, C), "float32")
            for k in T.serial(steps):
                T.copy(X[k * R, 0], x[k % 2, :, :])
                for i, j in T.Parallel(R, C):
                    y[k % 2, i, j] = x[k % 2, i, j] * 2 + x[0, i, j]
                T.copy(y[k % 2, :, :], Y[k * R, 0])

    x = rng.standard_normal((R * steps, C)).astype(np.float32)
    want = f64(x) * 2
    want[:R] += f64(x[:R])
    want[R:2 * R] += f64(x[:R])  # stage 0 holds step 0's rows until step 2 reloads it
    want[2 * R:] += f64(x[2 * R:])
    for kern in (emu(scale, arch), tilelang.compile(scale, target="cpu")):
        y = np.zeros_like(x)
        kern(x, y)
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_a_stage_out_of_range_is_an_error():
    @T.prim_func
    def bad(X: T.Tensor((16, 64), "float32")):
        with T.Kernel(1) as bx:
            x = T.alloc_ub((2, 16, 64), "float32")
            T.copy(X[0, 0], x[2, :, :])

    with pytest.raises(TileLangUnsupportedError, match="stage 2 of 'x', which has 2 stages"):
        ascend(bad)


def test_scalar_code_that_has_no_ascend_form_is_refused():
    @T.prim_func
    def threads(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            A[tx] = 1.0

    with pytest.raises(TileLangUnsupportedError, match="thread indices|store into global tensor 'A'"):
        ascend(threads)

    @T.prim_func
    def scalar_read(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=1) as bx:
            x = T.alloc_shared((64, 64), "float32")
            T.copy(A, x)
            if x[0, 0] > 0:
                T.copy(x, B)

    with pytest.raises(TileLangUnsupportedError, match="read of on-chip tile 'x' by the scalar unit"):
        ascend(scalar_read)


def test_a_block_table_read_by_the_scalar_unit():
    """Rows gathered through an index table in global memory: the scalar unit reads the table (GetValue)."""
    rows, N = 6, 40

    @T.prim_func
    def gather(X: T.Tensor((16, N), "float32"), Idx: T.Tensor((rows,), "int32"), Y: T.Tensor((rows, N), "float32")):
        with T.Kernel(rows, threads=1) as bx:
            t = T.alloc_shared((1, N), "float32")
            T.copy(X[Idx[bx], 0], t)
            for i, j in T.Parallel(1, N):
                t[i, j] = t[i, j] * 2.0
            T.copy(t, Y[bx, 0])

    rng = _rng()
    k = emu(gather)
    assert "X[(int64_t)(Idx.GetValue((int64_t)(bx))) * (int64_t)40" in k.get_kernel_source()
    x = rng.standard_normal((16, N)).astype(np.float32)
    idx = rng.integers(0, 16, rows).astype(np.int32)
    y = np.zeros((rows, N), np.float32)
    k(x, idx, y)
    np.testing.assert_allclose(y, x[idx] * 2)


def layernorm_kernel(N, D, BM, eps=1e-5):
    """bfloat16 in and out, float32 statistics also written out per row (a multi-statement T.Parallel body
    with a let, row values stored to global memory)."""

    @T.prim_func
    def ln(X: T.Tensor((N, D), "bfloat16"), G: T.Tensor((D,), "bfloat16"), Y: T.Tensor((N, D), "bfloat16"),
           Mu: T.Tensor((N,), "float32"), Rs: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BM), threads=128) as bx:
            xs = T.alloc_shared((BM, D), "bfloat16")
            gs = T.alloc_shared((D,), "bfloat16")
            xf = T.alloc_fragment((BM, D), "float32")
            sq = T.alloc_fragment((BM, D), "float32")
            s1 = T.alloc_fragment((BM,), "float32")
            s2 = T.alloc_fragment((BM,), "float32")
            mu = T.alloc_fragment((BM,), "float32")
            rs = T.alloc_fragment((BM,), "float32")
            T.copy(X[bx * BM, 0], xs)
            T.copy(G, gs)
            for i, j in T.Parallel(BM, D):
                xf[i, j] = T.Cast("float32", xs[i, j])
                sq[i, j] = xf[i, j] * xf[i, j]
            T.reduce_sum(xf, s1, dim=1)
            T.reduce_sum(sq, s2, dim=1)
            for i in T.Parallel(BM):
                mu[i] = s1[i] / D
                rs[i] = T.rsqrt(s2[i] / D - mu[i] * mu[i] + eps)
                Mu[bx * BM + i] = mu[i]
                Rs[bx * BM + i] = rs[i]
            for i, j in T.Parallel(BM, D):
                c = xf[i, j] - mu[i]
                xs[i, j] = T.Cast("bfloat16", c * rs[i] * T.Cast("float32", gs[j]))
            T.copy(xs, Y[bx * BM, 0])

    return ln


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("N,D,BM", [(32, 128, 8), (21, 96, 8)])
def test_layernorm_with_row_statistics_to_global_memory(arch, N, D, BM):
    import ml_dtypes
    rng = _rng()
    k = emu(layernorm_kernel(N, D, BM), arch)
    x = rng.standard_normal((N, D)).astype(ml_dtypes.bfloat16)
    g = rng.standard_normal(D).astype(ml_dtypes.bfloat16)
    y = np.zeros((N, D), ml_dtypes.bfloat16)
    mu, rs = np.full(N, np.nan, np.float32), np.full(N, np.nan, np.float32)
    k(x, g, y, mu, rs)
    xd = f64(x)
    m = xd.mean(1)
    r = 1 / np.sqrt((xd**2).mean(1) - m**2 + 1e-5)
    np.testing.assert_allclose(mu, m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rs, r, rtol=1e-4)
    np.testing.assert_allclose(f64(y), (xd - m[:, None]) * r[:, None] * f64(g), rtol=1e-2, atol=2e-2)
    src = k.get_kernel_source()
    assert "AscendC::Cast(" in src and "RoundMode::CAST_RINT" in src  # float32 -> bfloat16 rounds to nearest even
    assert "AscendC::DataCopyPad(Mu[" in src  # the row values, one per 32-byte block, to consecutive floats


def test_online_softmax_with_exp2_and_log2():
    """TileLang's online-softmax pattern: a running log-sum-exp per row over column blocks (exp2 / log2 as e^(x ln 2)
    and ln x / ln 2 on the vector unit), then a second pass."""
    M, N, BN = 24, 96, 32
    scale = 1.44269504

    @T.prim_func
    def sm(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(M // 8, threads=128) as bm:
            x = T.alloc_fragment((8, BN), "float32")
            e = T.alloc_fragment((8, BN), "float32")
            lse = T.alloc_fragment((8,), "float32")
            mx = T.alloc_fragment((8,), "float32")
            se = T.alloc_fragment((8,), "float32")
            T.fill(lse, -T.infinity("float32"))
            for n in T.Pipelined(N // BN, num_stages=2):
                T.copy(X[bm * 8, n * BN], x)
                T.reduce_max(x, mx, dim=1)
                for i, j in T.Parallel(8, BN):
                    e[i, j] = T.exp2(x[i, j] * scale - mx[i] * scale)
                T.reduce_sum(e, se, dim=1)
                for i in T.Parallel(8):
                    lse[i] = mx[i] * scale + T.log2(T.exp2(lse[i] - mx[i] * scale) + se[i])
            for n in T.Pipelined(N // BN, num_stages=2):
                T.copy(X[bm * 8, n * BN], x)
                for i, j in T.Parallel(8, BN):
                    e[i, j] = T.exp2(x[i, j] * scale - lse[i])
                T.copy(e, Y[bm * 8, n * BN])

    rng = _rng()
    k = emu(sm)
    x = (rng.standard_normal((M, N)) * 2).astype(np.float32)
    y = np.full_like(x, np.nan)
    k(x, y)
    p = np.exp(f64(x) - f64(x).max(1, keepdims=True))
    np.testing.assert_allclose(y, p / p.sum(1, keepdims=True), rtol=1e-4, atol=1e-7)


def flash_attention(B, H, S, D, BM, BN, causal=False):
    """FlashAttention forward as TileLang writes it: the scores and the output are T.gemm accumulators that the
    vector unit also rescales."""
    scale = (1.0 / D) ** 0.5 * 1.44269504

    @T.prim_func
    def fa(Q: T.Tensor((B, H, S, D), "float16"), K: T.Tensor((B, H, S, D), "float16"),
           V: T.Tensor((B, H, S, D), "float16"), O: T.Tensor((B, H, S, D), "float16")):
        with T.Kernel(T.ceildiv(S, BM), H, B, threads=128) as (bx, by, bz):
            Q_s = T.alloc_shared((BM, D), "float16")
            K_s = T.alloc_shared((BN, D), "float16")
            V_s = T.alloc_shared((BN, D), "float16")
            s = T.alloc_fragment((BM, BN), "float32")
            p = T.alloc_fragment((BM, BN), "float16")
            o = T.alloc_fragment((BM, D), "float32")
            m = T.alloc_fragment((BM,), "float32")
            m0 = T.alloc_fragment((BM,), "float32")
            r = T.alloc_fragment((BM,), "float32")
            ps = T.alloc_fragment((BM,), "float32")
            l = T.alloc_fragment((BM,), "float32")
            T.copy(Q[bz, by, bx * BM:(bx + 1) * BM, :], Q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m, -T.infinity("float32"))
            for k in T.Pipelined(T.ceildiv(S, BN), num_stages=2):
                T.copy(K[bz, by, k * BN:(k + 1) * BN, :], K_s)
                if causal:  # masks: the scores start at 0 where a key may be seen, -inf elsewhere
                    for i, j in T.Parallel(BM, BN):
                        s[i, j] = T.if_then_else(bx * BM + i >= k * BN + j, 0, -T.infinity("float32"))
                elif S % BN:
                    for i, j in T.Parallel(BM, BN):
                        s[i, j] = T.if_then_else(k * BN + j >= S, -T.infinity("float32"), 0)
                else:
                    T.clear(s)
                T.gemm(Q_s, K_s, s, transpose_B=True)
                T.copy(m, m0)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(BM):
                    r[i] = T.exp2(m0[i] * scale - m[i] * scale)
                for i, j in T.Parallel(BM, D):
                    o[i, j] *= r[i]
                for i, j in T.Parallel(BM, BN):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, ps, dim=1)
                for i in T.Parallel(BM):
                    l[i] = l[i] * r[i] + ps[i]
                T.copy(s, p)
                T.copy(V[bz, by, k * BN:(k + 1) * BN, :], V_s)
                T.gemm(p, V_s, o)
            for i, j in T.Parallel(BM, D):
                o[i, j] /= l[i]
            T.copy(o, O[bz, by, bx * BM:(bx + 1) * BM, :])

    return fa


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("S,D,causal", [(96, 64, False), (128, 32, False), (96, 32, True), (80, 32, False)])
def test_flash_attention_forward_on_the_cube_and_the_vector_core(arch, S, D, causal):
    """Unmasked, causal (T.if_then_else on the row and column index) and ragged keys (S = 80 with 32-key blocks)."""
    B, H = 1, 2
    rng = _rng()
    k = emu(flash_attention(B, H, S, D, 32, 32, causal), arch)
    q, kk, v = [rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3)]
    o = np.zeros_like(q)
    k(q, kk, v, o)
    sc = f64(q) @ f64(kk).transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        sc = np.where(np.tril(np.ones((S, S), bool)), sc, -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    np.testing.assert_allclose(f64(o), p / p.sum(-1, keepdims=True) @ f64(v), rtol=1e-2, atol=2e-3)


def test_a_mixed_kernel_runs_one_stream_per_core_with_cross_core_flags():
    src = ascend(flash_attention(1, 2, 96, 64, 32, 32)).get_kernel_source()
    aic, aiv = src.index("if ASCEND_IS_AIC {"), src.index("if ASCEND_IS_AIV {")
    cube, vec = src[aic:aiv], src[aiv:]
    assert "GM_ADDR tl_workspace)" in src and "AscendC::GetSubBlockIdx() != 0" in vec
    # each core declares its own buffers and runs its own instructions
    assert "TPosition::A1" in cube and "TPosition::CO1" in cube and "VECCALC" not in cube
    assert "VECCALC" in vec and "TPosition::A1" not in vec
    assert "AscendC::Mmad(" in cube and "AscendC::Mmad(" not in vec and "AscendC::ReduceMax(" in vec
    # the cube's product goes out through Fixpipe to the workspace; the vector core's P goes to L1 the same way
    assert "AscendC::Fixpipe(s_ws, s_l0c, tl_p);" in cube and "AscendC::DataCopyPad(s_prod, s_ws" in vec
    assert "AscendC::DataCopyPad(p_ws, p_cast" in vec and "AscendC::DataCopy(p, p_ws, tl_p);" in cube
    # every cross-core set on one side has its wait on the other
    sets = re.findall(r"CrossCoreSetFlag<0x2, PIPE_(\w+)>\((\d+)\)", src)
    waits = re.findall(r"CrossCoreWaitFlag\((\d+)\)", src)
    assert sets and sorted(i for _, i in sets) == sorted(waits)
    # a set is queued on a pipe of its own core: the cube's FIX hands the scores over, the vector core's MTE3
    # hands P back, and the waits for them are on the other side
    for p, i in sets:
        mine, other = (cube, vec) if f"PIPE_{p}>({i})" in cube else (vec, cube)
        assert f"CrossCoreWaitFlag({i})" in other and f"CrossCoreWaitFlag({i})" not in mine, (p, i)
    assert "CrossCoreSetFlag<0x2, PIPE_FIX>" in cube and "CrossCoreSetFlag<0x2, PIPE_MTE3>" in vec


def test_without_the_flags_the_two_cores_race():
    k = ascend(flash_attention(1, 1, 64, 32, 32, 32), execution_backend="emulator",
               pass_configs={"tl.test_skip_ascend_sync": True})
    q = np.ones((1, 1, 64, 32), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(q, q, q, np.zeros_like(q))
    msgs = [m for kind, m in e.value.reports if kind == "race"]
    assert any("pipe MTE2V reads 's_ws'" in m and "pipe FIX's write" in m for m in msgs), e.value.reports


@pytest.mark.parametrize("M,N,K", [(128, 96, 64), (72, 40, 48)])
def test_gemm_with_an_epilogue_on_the_vector_core(M, N, K):
    """relu(A B + bias[j]) with the epilogue on the accumulator itself (TileLang style)."""
    BM, BN, BK = 64, 32, 32

    @T.prim_func
    def mm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), bias: T.Tensor((N,), "float32"),
           C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "float16")
            B_s = T.alloc_shared((BK, BN), "float16")
            b_s = T.alloc_shared((BN,), "float32")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, BK), num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(B[k * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(bias[bx * BN], b_s)
            for i, j in T.Parallel(BM, BN):
                C_l[i, j] = T.max(C_l[i, j] + b_s[j], 0.0)
            T.copy(C_l, C[by * BM, bx * BN])

    rng = _rng()
    k = emu(mm)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, bias, c)
    np.testing.assert_allclose(c, np.maximum(f64(a) @ f64(b) + bias, 0), rtol=1e-5, atol=1e-4)


def test_bshd_tiles_are_strided_rows():
    """A [block, D] tile of a (B, S, H, D) tensor: its rows are H * D elements apart in global memory."""
    B, S, H, D, BS = 2, 40, 3, 32, 16

    @T.prim_func
    def k(X: T.Tensor((B, S, H, D), "float32"), Y: T.Tensor((B, S, H, D), "float32")):
        with T.Kernel(T.ceildiv(S, BS), H, B, threads=1) as (bx, by, bz):
            t = T.alloc_shared((BS, D), "float32")
            T.copy(X[bz, bx * BS:(bx + 1) * BS, by, :], t)
            for i, j in T.Parallel(BS, D):
                t[i, j] = t[i, j] * 2.0 + 1.0
            T.copy(t, Y[bz, bx * BS:(bx + 1) * BS, by, :])

    rng = _rng()
    kern = emu(k)
    x = rng.standard_normal((B, S, H, D)).astype(np.float32)
    y = np.full_like(x, np.nan)
    kern(x, y)
    np.testing.assert_allclose(y, f64(x) * 2 + 1, rtol=1e-6)
    assert "(uint32_t)(((96) - (32)) * 4)" in kern.get_kernel_source()  # a 256-byte gap between the rows


def test_masks_that_are_not_a_row_prefix_are_refused():
    @T.prim_func
    def bad(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16, 32), "float32")):
        with T.Kernel(1, threads=1) as bx:
            t = T.alloc_shared((16, 32), "float32")
            T.copy(X, t)
            for i, j in T.Parallel(16, 32):
                t[i, j] = T.if_then_else(j % 2 == 0, 1.0, 0.0)
            T.copy(t, Y)

    with pytest.raises(TileLangUnsupportedError, match="condition on the loop indices that is not linear in the column"):
        ascend(bad)


def select_kernel(M, N, BM, dtype, which):
    @T.prim_func
    def sel(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, BM)) as bx:
            x = T.alloc_shared((BM, N), dtype)
            y = T.alloc_shared((BM, N), dtype)
            m = T.alloc_fragment((BM,), dtype)
            T.copy(X[bx * BM, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(BM, N):
                if which == "leaky":  # a comparison of tile values choosing between tile values
                    y[i, j] = T.if_then_else(x[i, j] > 0, x[i, j], x[i, j] * T.cast(0.125, dtype))
                elif which == "compound":  # a row's value, an index bound, and, or, not
                    y[i, j] = T.if_then_else((x[i, j] * T.cast(2, dtype) >= m[i] and j < N - 3) or not j >= 2,
                                             x[i, j], T.cast(-1, dtype))
                else:  # an index bound choosing between a tile value and a scalar (a ragged key block)
                    y[i, j] = T.if_then_else(bx * 7 + j < N - 5, x[i, j], -T.infinity(dtype))
            T.copy(y, Y[bx * BM, 0])

    return sel


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("which", ["leaky", "compound", "bound"])
@pytest.mark.parametrize("dtype,M,N", [("float32", 50, 70), ("float16", 32, 40)])
def test_if_then_else_on_tile_values_is_compare_and_select(arch, which, dtype, M, N):
    """A T.if_then_else that is not a column mask between scalars: Compare into a bit mask (conditions
    combined as 0/1 tiles), Select between whole tiles; ragged sizes (the 256-byte repeats pad the tiles)."""
    rng = _rng()
    BM = 16
    k = emu(select_kernel(M, N, BM, dtype, which), arch)
    src = k.get_kernel_source()
    assert "AscendC::Compare(" in src and "AscendC::Select(" in src and "SELMODE::VSEL_TENSOR_TENSOR_MODE" in src
    x = rng.standard_normal((M, N)).astype(dtype)
    y = np.zeros_like(x)
    k(x, y)
    X = f64(x)
    ref = np.empty_like(X)
    for b in range(0, M, BM):
        xb = X[b:b + BM]
        j = np.arange(N)[None, :]
        if which == "leaky":
            rb = np.where(xb > 0, xb, xb * 0.125)
        elif which == "compound":
            rb = np.where(((xb * 2 >= xb.max(axis=1, keepdims=True)) & (j < N - 3)) | (j < 2), xb, -1.0)
        else:
            rb = np.where(b // BM * 7 + j < N - 5, xb, -np.inf)
        ref[b:b + BM] = rb
    np.testing.assert_array_equal(f64(y), ref.astype(dtype).astype(np.float64))


@pytest.mark.parametrize("arch", ARCHS)
def test_row_values_of_two_types_in_one_expression(arch):
    """A float16 row maximum in a float32 row expression (TileLang's online softmax): row-wise values sit one per
    32-byte block in both types, so the cast is one element per repeat, a block on in each."""
    rng = _rng()
    M, N, BM = 48, 40, 24

    @T.prim_func
    def rows(X: T.Tensor((M, N), "float16"), S: T.Tensor((M,), "float32")):
        with T.Kernel(M // BM) as bx:
            x = T.alloc_shared((BM, N), "float16")
            mx = T.alloc_fragment((BM,), "float16")
            s = T.alloc_fragment((BM,), "float32")
            T.copy(X[bx * BM, 0], x)
            T.reduce_max(x, mx, dim=1)
            for i in T.Parallel(BM):
                s[i] = T.exp2(mx[i] * 0.5) + mx[i]
                S[bx * BM + i] = s[i]

    k = emu(rows, arch)
    assert "AscendC::UnaryRepeatParams(1, 1, 1, 1)" in k.get_kernel_source()
    x = rng.standard_normal((M, N)).astype(np.float16)
    out = np.zeros(M, np.float32)
    k(x, out)
    mx = f64(x).max(axis=1)
    np.testing.assert_allclose(out, np.exp2(mx * 0.5) + mx, rtol=1e-3, atol=1e-3)


def test_a_gemm_operand_nothing_wrote_is_reported_where_it_reaches_the_output():
    @T.prim_func
    def mm(A: T.Tensor((32, 32), "float16"), C: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=1) as bx:
            A_s = T.alloc_shared((32, 32), "float16")
            B_s = T.alloc_shared((32, 32), "float16")  # never filled
            C_l = T.alloc_fragment((32, 32), "float32")
            T.copy(A, A_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C)

    k = ascend(mm, execution_backend="emulator")
    a = np.ones((32, 32), np.float16)
    with pytest.raises(TileLangEmulationError) as e:
        k(a, np.zeros((32, 32), np.float32))
    kind, msg = e.value.reports[0]
    assert kind == "uninitialized_read" and "pipe FIX reads" in msg and "'C_l'" in msg, e.value.reports
