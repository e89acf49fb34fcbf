"""T.atomic_add(element, value, return_prev=True): the element's value before the add, as an expression (TileLang's
top-k selector claims output slots so). Before: a TileLangUnsupportedError ("the atomic is a statement here").
Each thread claims a slot of a shared counter and of a global one; the slots must be a permutation (every value
exactly once), checked on the CPU target and in the emulator for CUDA and HIP; Metal and OpenCL refuse it."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

THREADS, BLOCKS = 128, 3


def _claim(dtype="int32"):
    @T.prim_func
    def k(Slots: T.Tensor((BLOCKS * THREADS,), "int32"), Local: T.Tensor((BLOCKS, THREADS), "int32"),
          Count: T.Tensor((1,), dtype), Sum: T.Tensor((1,), "float32"), Seen: T.Tensor((BLOCKS * THREADS,), "int32")):
        with T.Kernel(BLOCKS, threads=THREADS) as bx:
            counter = T.alloc_shared((1,), "int32")
            tx = T.get_thread_binding()
            if tx == 0:
                counter[0] = 0
            T.sync_threads()
            mine = T.atomic_add(counter[0], 1, return_prev=True)  # a slot of the block's shared counter
            Local[bx, mine] = tx
            g = T.atomic_add(Count[0], 1, return_prev=True)  # a slot of the grid's global counter
            Slots[g] = bx * THREADS + tx
            Seen[g] = 1  # reads only g: still each thread's own store
            before = T.atomic_add(Sum[0], 0.5, return_prev=True)
            if before < 0:  # never: the float sum only grows from 0
                Slots[0] = -1

    return k


@pytest.mark.ptx_twin_unordered
@pytest.mark.parametrize("where", ["cpu", "cuda", "hip"])
def test_atomic_add_return_prev_claims_distinct_slots(where):
    kw = dict(target="cpu") if where == "cpu" else dict(target=where, execution_backend="emulator")
    k = tilelang.compile(_claim(), **kw)
    slots = np.full(BLOCKS * THREADS, -7, np.int32)
    local = np.full((BLOCKS, THREADS), -7, np.int32)
    count, total = np.zeros(1, np.int32), np.zeros(1, np.float32)
    seen = np.zeros(BLOCKS * THREADS, np.int32)
    k(slots, local, count, total, seen)
    assert seen.all(), np.flatnonzero(seen == 0)
    assert count[0] == BLOCKS * THREADS and total[0] == 0.5 * BLOCKS * THREADS
    assert sorted(slots) == list(range(BLOCKS * THREADS))
    for b in range(BLOCKS):
        assert sorted(local[b]) == list(range(THREADS))


def test_return_prev_compiles_to_the_value_returning_atomic():
    g = tilelang.compile(_claim(), target="cuda")
    assert "tl::atomic_fetch_add(" in g.get_kernel_source() and "atom.shared.add" in g.get_ptx().replace(".u32", "")


@pytest.mark.parametrize("target,name", [("metal", "Metal"), ("opencl", "OpenCL")])
def test_return_prev_is_refused_where_not_implemented(target, name):
    with pytest.raises(TileLangUnsupportedError, match=f"the {name} lowering does not implement it"):
        tilelang.compile(_claim(), target=target)


def test_return_prev_takes_one_element_of_32_or_64_bits():
    with pytest.raises(TileLangUnsupportedError, match=r"updates 32- and 64-bit elements.*'C' is float16"):
        @T.prim_func
        def k(C: T.Tensor((4,), "float16")):
            with T.Kernel(1, threads=32):
                x = T.atomic_add(C[0], 1.0, return_prev=True)  # noqa: F841
    with pytest.raises(TileLangTypeError, match="single element"):
        @T.prim_func
        def k2(C: T.Tensor((4,), "int32"), D: T.Tensor((4,), "int32")):
            with T.Kernel(1, threads=32):
                x = T.atomic_add(C, D, return_prev=True)  # noqa: F841
    with pytest.raises(TileLangUnsupportedError, match=r"T.atomic_max is a statement here"):
        @T.prim_func
        def k3(C: T.Tensor((4,), "int32")):
            with T.Kernel(1, threads=32):
                x = T.atomic_max(C[0], 1, return_prev=True)  # noqa: F841
