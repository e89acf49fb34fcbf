"""T.atomic_load and T.atomic_store (the language issue's missing names; TileLang's stream-K GEMM publishes
and reads its fix-up flags with them): every 32- and 64-bit dtype, every memory order the target takes, on
global and shared elements, on the CPU target, OpenCL (PoCL) and the CUDA, HIP and Metal lowerings in the
emulator, against NumPy at a ragged size (the global accesses outside the tensor are skipped, a load there
reads 0); the sources are built for real (NVRTC: ld.acquire / st.release / fence.sc in the PTX; hipcc;
clang for MSL). Metal and OpenCL 1.2 atomics are relaxed (Metal's 32-bit only): other orders are refused at
the line. Before: AttributeError (no such name)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 20261204
DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


def load_store(n, dtype, load_order, store_order, block=64):
    """Dst[i] = 3 * Src[i] + 1 through a shared staging element per thread, each access atomic."""

    @T.prim_func
    def k(Src: T.Tensor((n,), dtype), Dst: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=block) as b:
            S = T.alloc_shared((block,), dtype)
            for i in T.Parallel(block):
                T.atomic_store(S[i], T.atomic_load(Src[b * block + i], load_order), store_order)
            for i in T.Parallel(block):
                if b * block + i < n:
                    T.atomic_store(Dst[b * block + i], T.atomic_load(S[i], load_order) * 3 + 1, store_order)

    return k


def _check(target, backend, dtype, lo, so):
    n = 150  # ragged: the last block's tail is outside the tensors
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    src = (r.integers(0, 1000, n) if dtype.startswith(("int", "uint")) else r.standard_normal(n)).astype(dtype)
    dst = np.zeros(n, dtype)
    tilelang.compile(load_store(n, dtype, lo, so), target=target, execution_backend=backend)(src, dst)
    if dtype.startswith(("int", "uint")):
        np.testing.assert_array_equal(dst, src * 3 + 1)
    else:  # x * 3 + 1 rounds once (fused) or twice
        np.testing.assert_allclose(dst.astype(np.float64), src.astype(np.float64) * 3 + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator"), ("hip", "emulator")])
@pytest.mark.parametrize("lo,so", [("relaxed", "relaxed"), ("acquire", "release"), ("seq_cst", "seq_cst")])
def test_load_store_with_every_order(target, backend, dtype, lo, so):
    _check(target, backend, dtype, lo, so)


@pytest.mark.parametrize("dtype", DTYPES)
def test_relaxed_on_opencl(dtype):
    _check("opencl", None, dtype, "relaxed", "relaxed")


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32"])
def test_relaxed_32bit_on_metal(dtype):
    _check("metal", "emulator", dtype, "relaxed", "relaxed")


def rotate(n, block=64):
    """Dst[b*block + i] = Src[b*block + (i + 1) % block]: each thread reads the shared element another
    thread stored atomically, so a barrier must separate the two loops."""

    @T.prim_func
    def k(Src: T.Tensor((n,), "int32"), Dst: T.Tensor((n,), "int32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as b:
            S = T.alloc_shared((block,), "int32")
            for i in T.Parallel(block):
                T.atomic_store(S[i], Src[b * block + i], "relaxed")
            for i in T.Parallel(block):
                Dst[b * block + i] = T.atomic_load(S[(i + 1) % block], "relaxed")

    return k


@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator"), ("opencl", None)])
def test_an_atomic_store_to_shared_memory_is_ordered_before_other_threads_read_it(target, backend):
    src = np.arange(128, dtype=np.int32) * 7
    dst = np.zeros(128, np.int32)
    tilelang.compile(rotate(128), target=target, execution_backend=backend)(src, dst)
    np.testing.assert_array_equal(dst, np.roll(src.reshape(2, 64), -1, axis=1).reshape(-1))
    if target == "cuda":
        assert "__syncthreads()" in tilelang.compile(rotate(128), target="cuda -arch=sm_80").get_kernel_source()


def test_consume_is_acquire():
    _check("cuda", "emulator", "int32", "consume", "release")


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "hip", "metal"])
def test_generated_sources_compile(target):
    orders = ("relaxed", "relaxed") if target == "metal" else ("acquire", "release")
    k = tilelang.compile(load_store(150, "float32", *orders), target=target)
    src = k.get_kernel_source()
    if target == "metal":
        assert "atomic_load_explicit(" in src and "atomic_store_explicit(" in src
    else:
        assert "tl::atomic_load<2>(" in src and "tl::atomic_store<3>(" in src
    if target.startswith("cuda"):
        ptx = k.get_ptx()
        assert "ld.acquire.gpu" in ptx and "st.release.gpu" in ptx
        ptx = tilelang.compile(load_store(150, "int64", "seq_cst", "seq_cst"), target=target).get_ptx()
        assert "fence.sc.gpu" in ptx and "ld.acquire.gpu.b64" in ptx and "st.relaxed.gpu.b64" in ptx


@pytest.mark.parametrize("target,what", [("metal", "relaxed"), ("opencl", "relaxed")])
def test_orders_a_target_lacks_are_refused_at_the_line(target, what):
    with pytest.raises(TileLangUnsupportedError, match=what) as e:
        tilelang.compile(load_store(64, "int32", "acquire", "relaxed"), target=target)
    assert "test_atomic_load_store.py" in str(e.value)


def test_metal_refuses_64bit_elements():
    with pytest.raises(TileLangUnsupportedError, match="32-bit"):
        tilelang.compile(load_store(64, "int64", "relaxed", "relaxed"), target="metal")


def test_bad_arguments_are_type_errors():
    with pytest.raises(TileLangTypeError, match="memory_order"):
        load_store(64, "int32", "release", "relaxed")  # a load cannot release
    with pytest.raises(TileLangTypeError, match="32- and 64-bit"):
        load_store(64, "float16", "relaxed", "relaxed")
    with pytest.raises(TileLangTypeError, match="global or shared"):
        @T.prim_func
        def k(A: T.Tensor((4,), "int32")):
            with T.Kernel(1, threads=4):
                x = T.alloc_local((1,), "int32")
                T.atomic_store(x[0], 1)
