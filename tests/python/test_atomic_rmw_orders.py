"""T.atomic_add / T.atomic_max / T.atomic_min of one element with a memory_order (TileLang's stream-K GEMM publishes
its fix-up count with `T.atomic_add(Fixup[t], k, memory_order="release")` and reads it with an acquire load): a
relaxed read-modify-write between fences, as C++'s fence-atomic synchronisation defines it (release: a fence
before; acquire: a fence after; acq_rel / seq_cst: both). Run on the CPU target and the CUDA / HIP lowerings in
the emulator against NumPy, the sources built for real (PTX: fence.acq_rel.gpu / fence.sc.gpu around the atom;
hipcc), refused on Metal and OpenCL (relaxed atomics only) and for tiles. Before: TileLangUnsupportedError for
every order but relaxed."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

ORDERS = ["relaxed", "acquire", "release", "acq_rel", "seq_cst", "consume"]


def publish(n, order, blocks=4, block=32):
    """Every thread adds its value to Sum[0] (and the previous values of Count[0] come back in Prev), then the
    block's thread 0 publishes one more to Flag with the order; the max / min of the values go to Ext."""

    @T.prim_func
    def k(X: T.Tensor((n,), "int32"), Sum: T.Tensor((1,), "int32"), Ext: T.Tensor((2,), "int32"),
          Flag: T.Tensor((1,), "int32"), Prev: T.Tensor((n,), "int32")):
        with T.Kernel(blocks, threads=block) as b:
            tx = T.get_thread_binding()
            i = b * block + tx
            if i < n:
                T.atomic_add(Sum[0], X[i], memory_order=order)
                T.atomic_max(Ext[0], X[i], memory_order=order)
                T.atomic_min(Ext[1], X[i], memory_order=order)
                Prev[i] = T.atomic_add(Flag[0], 0, memory_order=order, return_prev=True)
            T.sync_threads()
            if tx == 0:
                T.atomic_add(Flag[0], 1, memory_order=order)

    return k


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("target,backend", [("cpu", None), ("cuda", "emulator"), ("hip", "emulator")])
def test_ordered_read_modify_writes(target, backend, order):
    n = 117  # ragged: the last block's tail does no work
    seed = 20261207
    print("seed", seed)
    x = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int32)
    s, e, f, p = np.zeros(1, np.int32), np.array([-10**9, 10**9], np.int32), np.zeros(1, np.int32), np.zeros(n, np.int32)
    tilelang.compile(publish(n, order), target=target, execution_backend=backend)(x, s, e, f, p)
    assert s[0] == x.astype(np.int64).sum() and e[0] == x.max() and e[1] == x.min()
    assert f[0] == 4 and p.max() <= 3 and p.min() >= 0


def test_the_fences_in_the_sources():
    src = tilelang.compile(publish(64, "release"), target="cuda -arch=sm_80")
    ptx = src.get_ptx()
    # a release fence before each atom, none after: fence.acq_rel.gpu then the atomic add
    assert re.search(r"fence\.acq_rel\.gpu;\s*\n\s*(?:\S.*\n\s*)?(?:atom|red)\.global", ptx), ptx[-3000:]
    assert "fence.sc.gpu" in tilelang.compile(publish(64, "seq_cst"), target="cuda -arch=sm_80").get_ptx()
    assert "fence" not in tilelang.compile(publish(64, "relaxed"), target="cuda -arch=sm_80").get_ptx()
    assert "tl::memory_fence<2>()" in tilelang.compile(publish(64, "acquire"), target="hip").get_kernel_source()


@pytest.mark.parametrize("target", ["metal", "opencl"])
def test_targets_with_relaxed_atomics_refuse_orders(target):
    with pytest.raises(TileLangUnsupportedError, match="atomics are relaxed") as e:
        tilelang.compile(publish(64, "release"), target=target)
    assert "test_atomic_rmw_orders.py" in str(e.value)


def test_bad_orders_and_tiles():
    with pytest.raises(TileLangTypeError, match="memory_order is one of"):
        publish(64, "sequential")
    with pytest.raises(TileLangUnsupportedError, match="of a tile is not supported"):
        @T.prim_func
        def k(A: T.Tensor((4, 4), "float32"), B: T.Tensor((4, 4), "float32")):
            with T.Kernel(1, threads=32):
                T.atomic_add(A, B, memory_order="release")
