"""execution_backend="ptx": the PTX that NVRTC made of a kernel's generated CUDA, run by the PTX emulator
(src/emulator/ptx/), against NumPy (float64, seeded inputs, ragged sizes), against the thread-level IR emulator,
and on the random programs of the fuzzer. PTX we did not write (Triton's) runs in test_ptx_triton.py; the
instruction semantics themselves are tested on hand-written PTX in tests/cpp/test_emulator_ptx.cc."""
import os
import sys

import numpy as np
import pytest

import kernels
import tilelang
from tilelang.errors import TileLangEmulationError, TileLangUnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fuzz"))
import programs  # noqa: E402

SEED = 20261206


def ptx(f, arch="sm_80", **kw):
    return tilelang.compile(f, target=f"cuda -arch={arch}", execution_backend="ptx", **kw)


def rng(tag):
    print(f"seed {SEED} + {tag}")
    return np.random.default_rng(SEED + tag)


INSTRUCTIONS = {"sm_80": ("mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned", "cp.async.cg.shared.global"),
                "sm_90a": ("wgmma.mma_async.sync.aligned.m64n128k16", "cp.async.bulk.tensor.2d",
                           "mbarrier.try_wait.parity")}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("M,N,K", [(256, 256, 256), (200, 136, 96)])
def test_reference_gemm_at_ptx_level_matches_numpy(M, N, K, arch):
    """sm_80: cp.async, ldmatrix, mma.sync; sm_90a: TMA with mbarriers, warp-specialised wgmma."""
    r = rng(M)
    a = r.standard_normal((M, K)).astype(np.float16)
    b = r.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k = ptx(kernels.matmul(M, N, K), arch)
    k(a, b, c)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-2)
    src = k._compiled.ptx
    for instr in INSTRUCTIONS[arch]:
        assert instr in src, instr  # the instructions this test is about were executed
    assert k.last_lane_ops > 0


def _args(kernel, r):
    out = []
    for p in kernel.params:
        shape = tuple(d if isinstance(d, int) else 1000 for d in p.shape)  # symbolic dims: a ragged 1000
        out.append(r.standard_normal(shape).astype(np.dtype(p.dtype)))
    return out


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", [n for n, _ in kernels.all_kernels()])
def test_every_test_kernel_agrees_with_the_thread_level_emulator(name, arch):
    """Every kernel of the shared test set at PTX level against the thread-level IR emulator: bit for bit where
    the PTX computes what the IR does (GEMMs, FlashAttention, scans), within float32 rounding where NVRTC uses
    the approximate exp2 / rsqrt the IR emulator computes exactly. sm_90a: TMA, mbarrier pipelines, wgmma,
    stmatrix, TMA stores."""
    f = dict(kernels.all_kernels())[name]
    ke = tilelang.compile(f, target=f"cuda -arch={arch}", execution_backend="emulator")
    kp = ptx(f, arch)
    args = _args(ke, rng(len(name)))
    a1, a2 = [a.copy() for a in args], [a.copy() for a in args]
    ke(*a1)
    kp(*a2)
    for x, y in zip(a1, a2):
        if name in ("softmax", "rms_norm"):
            np.testing.assert_allclose(y, x, rtol=2e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(y, x)


def test_softmax_and_flashattention_match_numpy():
    r = rng(7)
    x = r.standard_normal((256, 128)).astype(np.float32)
    y = np.zeros_like(x)
    ptx(kernels.softmax(256, 128, 8))(x, y)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    q, kk, v = (r.standard_normal((1, 2, 128, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    ptx(kernels.flashattn(1, 2, 128, 64, True))(q, kk, v, o)
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), kk.astype(np.float64)) / np.sqrt(64)
    s = np.where(np.tril(np.ones((128, 128), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
    np.testing.assert_allclose(o.astype(np.float64), want, atol=2e-2)


def test_a_wrong_mma_layout_in_the_generated_code_gives_wrong_numbers():
    """tl.test_corrupt_mma_layout swaps accumulator columns in the code generator: the PTX that ships is wrong,
    and the PTX emulator, which knows only the ISA's fragment layout, shows it."""
    r = rng(3)
    a = r.standard_normal((128, 64)).astype(np.float16)
    b = r.standard_normal((64, 128)).astype(np.float16)
    c = np.zeros((128, 128), np.float16)
    ptx(kernels.matmul(128, 128, 64), pass_configs={"tl.test_corrupt_mma_layout": True})(a, b, c)
    assert np.abs(c.astype(np.float64) - a.astype(np.float64) @ b.astype(np.float64)).max() > 1.0


def test_a_missing_barrier_is_a_race_reported_at_the_ptx_cuda_and_dsl_lines():
    k = ptx(kernels.softmax(256, 128, 8), pass_configs={"tl.disable_barrier_insertion": True})
    x = rng(11).standard_normal((256, 128)).astype(np.float32)
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros_like(x))
    msg = str(e.value)
    assert "[race]" in msg and "at PTX line" in msg and "tl_kernel.cu:" in msg, msg[:2000]
    assert "from the DSL at " in msg and "kernels.py:" in msg, msg[:2000]
    # warps run one after another up to a barrier: without one, reads also find bytes not yet written
    assert "race" in {kind for kind, _ in e.value.reports}


def test_what_the_ptx_emulator_cannot_run_is_a_clear_error():
    from tilelang import _ffi
    body = "tcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;"
    text = (".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n .reg .pred %p<2>;\n"
            " .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n " + body + "\n ret;\n}\n")
    with pytest.raises(TileLangUnsupportedError, match=r"line \d+: modifier \.ws of tcgen05 is not supported"):
        _ffi.emulate_ptx_text(text, "k", [1, 1, 1], [128, 1, 1], 0, [], [])
    with pytest.raises(TileLangUnsupportedError, match="runs the PTX of CUDA kernels"):
        tilelang.compile(kernels.matmul(128, 128, 64), target="cpu", execution_backend="ptx")


def test_thread_level_emulator_configs_are_said_to_be_ignored():
    with pytest.warns(UserWarning, match="emulator.check_shift_counts applies to the thread-level emulator only"):
        ptx(kernels.softmax(16, 128, 8), pass_configs={"emulator.check_shift_counts": False})


def test_random_programs_agree_between_the_two_emulators():
    """The fuzzer's random tile programs on both emulators: the same results (and against NumPy), the same kinds
    of findings."""
    seed = int(os.environ.get("TL_FUZZ_SEED", "20261206"))
    print(f"differential fuzz: seeds {seed}..{seed + 7}")
    failures = []
    for s in range(seed, seed + 8):
        case = programs.generate(s)
        bad = programs.differential_ptx(case)
        if bad:
            failures.append(case.describe() + "\n" + "\n".join(bad))
    assert not failures, "\n\n".join(failures)


# ------------------------------------------------------------------------- generated-code bugs it found
# Both passed in the thread-level emulator (which reads the IR's semantics) and were wrong in the CUDA that
# ships; the PTX emulator showed them. sm_80, against NumPy.

def test_int4_reads_sign_extend_in_the_generated_cuda():
    """int4 elements are stored one per byte in the low nibble: the CUDA read was a plain int8 load (-8 read as 8)."""
    import ml_dtypes

    from tilelang import language as T

    @T.prim_func
    def widen(A: T.Tensor((16,), "int4"), O: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(16):
                O[i] = T.cast(A[i], "float32")

    a = np.arange(-8, 8).astype(ml_dtypes.int4)
    o = np.zeros(16, np.float32)
    k = ptx(widen)
    k(a, o)
    np.testing.assert_array_equal(o, np.arange(-8, 8).astype(np.float32))
    assert "<< 4) >> 4)" in k.get_kernel_source()


def test_float_to_narrow_int_saturates_in_the_generated_cuda():
    """tl::cast<uint8_t>(float) was a C++ static_cast, undefined out of range: NVRTC converted through 32 bits and
    truncated (300 -> 44). The device header now saturates, NaN giving 0 (docs/semantics.md)."""
    from tilelang import language as T

    @T.prim_func
    def convert(A: T.Tensor((8,), "float32"), O: T.Tensor((8,), "uint8"), P: T.Tensor((8,), "int8"),
                Q: T.Tensor((8,), "int16")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(8):
                O[i] = T.cast(A[i], "uint8")
                P[i] = T.cast(A[i], "int8")
                Q[i] = T.cast(A[i], "int16")

    a = np.array([300, -5, 255.7, 1e10, -1e10, 3.5, np.nan, -2.9], np.float32)
    sat = lambda lo, hi: np.where(np.isnan(a), 0, np.clip(np.trunc(np.nan_to_num(a.astype(np.float64))), lo, hi))
    o, p, q = np.zeros(8, np.uint8), np.zeros(8, np.int8), np.zeros(8, np.int16)
    ptx(convert)(a, o, p, q)
    np.testing.assert_array_equal(o, sat(0, 255))
    np.testing.assert_array_equal(p, sat(-128, 127))
    np.testing.assert_array_equal(q, sat(-32768, 32767))


def test_tensor_memory_gemm_at_ptx_level_matches_numpy():
    """sm_100a: tcgen05.alloc, tcgen05.mma kind::f16 into tensor memory (instruction and shared-memory descriptors
    decoded from the ISA), tcgen05.commit to an mbarrier, tcgen05.ld .32x32b, ragged N and K."""
    import test_tcgen05
    M, N, K = 256, 200, 200
    r = rng(100)
    a = r.standard_normal((M, K)).astype(np.float16)
    b = r.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k = ptx(test_tcgen05.tc_gemm(M, N, K), "sm_100a")
    k(a, b, c)
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64).T, rtol=2e-3,
                               atol=2e-2)
    for instr in ("tcgen05.alloc", "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.commit", "tcgen05.ld.sync.aligned"):
        assert instr in k._compiled.ptx, instr


def test_a_vector_store_into_shared_memory_is_a_shared_store():
    """before: a register chunk stored to a shared tile went through tl::vector_store, whose inline PTX is
    st.global: with the generic address of shared memory that is not a shared store (undefined on a GPU; the PTX
    emulator reported it outside every buffer). expected: st.shared, and the copy is right at PTX level."""
    from tilelang import language as T

    @T.prim_func
    def k(A: T.Tensor((128,), "float16"), B: T.Tensor((128,), "float16")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((128,), "float16")
            S = T.alloc_shared((128,), "float16")
            for i in T.Parallel(128):
                F[i] = A[i] * T.float16(2)
            T.copy(F, S)
            T.copy(S, B)

    kern = ptx(k)
    assert "tl::vector_store_shared<8>((&S[" in kern.get_kernel_source()
    assert "st.shared.v2.b32" in kern._compiled.ptx
    a = rng(7).standard_normal(128).astype(np.float16)
    b = np.zeros(128, np.float16)
    kern(a, b)
    np.testing.assert_array_equal(b, a * np.float16(2))


def _printing():
    from tilelang import language as T

    @T.prim_func
    def k(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            tx = T.get_thread_binding()
            if tx < 3:
                T.print(A[tx], msg="a=")
            T.device_assert(A[tx % 4] < 100.0, "A is small")
            B[tx % 4] = A[tx % 4]
    return k


def test_device_printf_and_assert_at_ptx_level(capfd):
    """T.print is a device printf (vprintf with its packed argument buffer): the PTX emulator prints what the
    thread-level emulator prints. T.device_assert traps: reported."""
    a = np.array([1.5, -2.25, 3.0, 4.0], np.float32)
    tilelang.compile(_printing(), target="cuda", execution_backend="emulator")(a, np.zeros(4, np.float32))
    want = capfd.readouterr().out
    ptx(_printing())(a, np.zeros(4, np.float32))
    got = capfd.readouterr().out
    assert got == want and "a=1.5" in got, (got, want)
    bad = a.copy()
    bad[1] = 500.0
    with pytest.raises(TileLangEmulationError) as e:
        ptx(_printing())(bad, np.zeros(4, np.float32))
    assert "assert" in {kind for kind, _ in e.value.reports}
    assert "T.device_assert failed: A is small" in capfd.readouterr().out


def test_a_grid_from_a_scalar_argument_launches():
    """before: T.Kernel(T.ceildiv(n, 32)) with a scalar n was refused at launch ("this launcher supports grids of
    constants and tensor dimensions"), the GPU launcher included. expected: the grid is computed from n."""
    from tilelang import language as T

    @T.prim_func
    def k(X: T.Tensor((1000,), "float32"), Y: T.Tensor((1000,), "float32"), n: T.int32):
        with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i < n:
                    Y[bx * 32 + i] = X[bx * 32 + i] + 1.0

    x = rng(9).standard_normal(1000).astype(np.float32)
    for n in (1000, 77):
        y = np.zeros(1000, np.float32)
        kern = ptx(k)
        kern(x, y, n)
        np.testing.assert_array_equal(y[:n], x[:n] + 1)
        assert not y[n:].any()


def test_wgmma_operands_written_by_threads_need_the_async_proxy_fence():
    """The generic-to-async proxy rule at PTX level: without the fence (the test hook) the wgmma reads shared bytes
    the threads wrote with no fence.proxy.async on the way; with it, nothing is reported."""
    import test_hopper
    f = test_hopper._thread_written_operand_gemm(64, 64, 64)
    r = rng(12)
    a = r.standard_normal((64, 64)).astype(np.float16)
    b = r.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    ptx(f, "sm_90a")(a, b, c)
    np.testing.assert_allclose(c, (a.astype(np.float64) * 2) @ b.astype(np.float64), rtol=1e-2, atol=1e-2)
    with pytest.raises(TileLangEmulationError) as e:
        ptx(f, "sm_90a", pass_configs={"tl.test_skip_fence_proxy_async": True})(a, b, c)
    kind, msg = e.value.reports[0]
    assert kind == "async_proxy" and "wgmma" in msg and "no fence.proxy.async" in msg, msg
    assert "from the DSL at " in str(e.value) and "test_hopper.py" in str(e.value)


def test_the_twin_fails_a_test_where_the_two_emulators_disagree():
    """conftest.py's twin runs every CUDA kernel a test launches in the thread-level emulator again at PTX level and
    compares. Slot claims by atomics legitimately differ (the thread-level emulator runs thread 0 first, the PTX
    emulator the warp that left the barrier last): unmarked, the twin fails the test; marked ptx_twin_unordered
    (compat/test_atomic_return_prev.py), the arrays are compared as multisets and it passes."""
    if os.environ.get("TL_PTX_TWIN") == "0":
        pytest.skip("TL_PTX_TWIN=0 turned the twin off")
    sys.path.insert(0, os.path.join(HERE, "compat"))
    import test_atomic_return_prev as claims
    k = tilelang.compile(claims._claim(), target="cuda", execution_backend="emulator")
    n = claims.BLOCKS * claims.THREADS
    args = (np.full(n, -7, np.int32), np.full((claims.BLOCKS, claims.THREADS), -7, np.int32), np.zeros(1, np.int32),
            np.zeros(1, np.float32), np.zeros(n, np.int32))
    with pytest.raises(AssertionError, match=r"ptx_twin: argument \d of kernel 'k' differs between the thread-level "
                                             r"emulator and the PTX emulator"):
        k(*args)
    assert sorted(args[0]) == list(range(n))  # the thread-level emulator's own result stands


def test_a_tma_copy_from_a_reshaped_view_tiles_the_view():
    """before: the tensor map of a TMA copy from `T.reshape(A, (67, 8))` of a 1-D argument was encoded from the
    argument's shape (rank 1 for a 2-D copy: the PTX emulator refused it, and the CUDA launcher read past the
    shape); expected: the launch spec keeps the view's shape, and both the launcher and the PTX level tile it."""
    from tilelang import language as T

    @T.prim_func
    def views(A: T.Tensor((536,), "float16"), O: T.Tensor((536,), "float16")):
        with T.Kernel(1, T.ceildiv(67, 32), threads=128) as (bx, by):
            A2 = T.reshape(A, (67, 8))
            O2 = T.Tensor((67, 8), "float16", O.data)
            S = T.alloc_shared((32, 8), "float16")
            T.copy(A2[by * 32, 0], S)
            for i, j in T.Parallel(32, 8):
                if by * 32 + i < 67:
                    O2[by * 32 + i, j] = S[i, j] * T.float16(2)

    a = rng(31).standard_normal(536).astype(np.float16)
    o = np.zeros(536, np.float16)
    k = ptx(views, "sm_90a")
    assert "cp.async.bulk.tensor.2d" in k._compiled.ptx
    k(a, o)
    np.testing.assert_array_equal(o, a * np.float16(2))
