"""TileLang's TL_DISABLE_THREAD_STORAGE_SYNC (its radix top-k and indexer kernels set it and place their own
T.sync_threads()): the program orders its own shared buffers, and the compiler still places the barriers its
own scratch needs (a cross-warp reduction's exchange), as TileLang's reductions synchronise themselves.
Before: the option removed every barrier, and a T.reduce_sum raced on its exchange buffer (the emulator
reported races on 'red_smem'; on a GPU the sums could be wrong)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import PassConfigKey
from tilelang.errors import TileLangEmulationError


SEED = 99
CFG = {PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True}


@pytest.mark.parametrize("target", ["cuda", "hip", "metal"])
def test_reduction_scratch_keeps_its_barriers(target):
    @T.prim_func
    def k(A: T.Tensor((32, 64), "float32"), S: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_fragment((32, 64), "float32")
            s = T.alloc_fragment((32,), "float32")
            T.copy(A, a)
            T.reduce_sum(a, s, dim=1)
            T.copy(s, S)

    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal((32, 64)).astype(np.float32)
    s = np.zeros(32, np.float32)
    tilelang.compile(k, target=target, execution_backend="emulator", pass_configs=CFG)(a, s)
    np.testing.assert_allclose(s, a.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


def _exchange(sync):
    @T.prim_func
    def k(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((128,), "float32")
            S[tx] = A[tx]
            if sync:
                T.sync_threads()
            B[tx] = S[(tx + 1) % 128]

    return k


def test_the_programs_own_shared_buffers_are_its_own_to_order():
    a = np.arange(128, dtype=np.float32)
    b = np.zeros_like(a)
    tilelang.compile(_exchange(True), target="cuda", execution_backend="emulator", pass_configs=CFG)(a, b)
    np.testing.assert_array_equal(b, np.roll(a, -1))
    with pytest.raises(TileLangEmulationError, match="race"):
        tilelang.compile(_exchange(False), target="cuda", execution_backend="emulator", pass_configs=CFG)(a, b)
    # without the option the compiler orders them itself
    tilelang.compile(_exchange(False), target="cuda", execution_backend="emulator")(a, b)
    np.testing.assert_array_equal(b, np.roll(a, -1))


@pytest.mark.parametrize("where", ["cpu", "cuda", "hip", "opencl"])
@pytest.mark.parametrize("clear", [True, False])
def test_reduce_into_shared_memory(where, clear):
    """`T.reduce_sum(fragment, shared)` (TileLang's mHC backward): before, "T.reduce on CUDA reduces a fragment
    into a fragment". The reduction goes into a fragment of the destination's shape and is copied there (the
    destination's old values folded in when clear=False)."""
    @T.prim_func
    def k(A: T.Tensor((8, 48), "float32"), S: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_fragment((8, 48), "float32")
            s = T.alloc_shared((8,), "float32")
            T.copy(A, a)
            for i in T.Parallel(8):
                s[i] = 1.5
            T.reduce_sum(a, s, dim=1, clear=clear)
            T.copy(s, S)

    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal((8, 48)).astype(np.float32)
    out = np.zeros(8, np.float32)
    opts = {"target": where} if where in ("cpu", "opencl") else {"target": where, "execution_backend": "emulator"}
    tilelang.compile(k, **opts)(a, out)
    np.testing.assert_allclose(out, a.astype(np.float64).sum(1) + (0 if clear else 1.5), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("where", ["cpu", "cuda", "metal"])
@pytest.mark.parametrize("dst_scope", ["shared", "fragment"])
def test_reduce_of_shared_memory(where, dst_scope):
    """`T.reduce_sum(shared, dst)` along either dim (TileLang's mHC backward reduces a shared buffer): before, "T.reduce
    on CUDA reduces a fragment into a fragment". The source is copied into a fragment first. A fragment
    destination that is also copied out waits for the reduction's layout (it used to get a free layout first,
    which the reduction could not produce)."""
    @T.prim_func
    def k(A: T.Tensor((8, 16, 4), "float32"), S: T.Tensor((8, 4), "float32"), R: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=128) as bx:
            buf = T.alloc_shared((8, 16, 4), "float32")
            y1 = T.alloc_shared((8, 16), "float32") if dst_scope == "shared" else T.alloc_fragment((8, 16), "float32")
            y2 = T.alloc_shared((8, 4), "float32") if dst_scope == "shared" else T.alloc_fragment((8, 4), "float32")
            T.copy(A, buf)
            T.reduce_sum(buf, y1, dim=-1)
            T.reduce_sum(buf, y2, dim=-2)
            T.copy(y1, R)
            T.copy(y2, S)

    print(f"seed {SEED}")
    a = np.random.default_rng(SEED).standard_normal((8, 16, 4)).astype(np.float32)
    s, r = np.zeros((8, 4), np.float32), np.zeros((8, 16), np.float32)
    opts = {"target": where} if where == "cpu" else {"target": where, "execution_backend": "emulator"}
    tilelang.compile(k, **opts)(a, s, r)
    np.testing.assert_allclose(r, a.astype(np.float64).sum(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, a.astype(np.float64).sum(-2), rtol=1e-5, atol=1e-5)
