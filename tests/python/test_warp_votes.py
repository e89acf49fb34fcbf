"""T.any_sync and T.all_sync (the language issue's missing names; TileLang's AWS FlashAttention votes
whether a warp must rescale): per warp (CUDA, 32 lanes, with a lane mask) or per wave (HIP, 64 lanes, the
full mask only: TileLang ignores a partial one there, here it is refused), in the emulator against NumPy on seeded random predicates, the sources built
for real (NVRTC: vote.sync in the PTX; hipcc; clang for MSL: simd_any / simd_all); the CPU target and
OpenCL, which have no fixed-size warps, refuse it at the line. Before: AttributeError (no such name)."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangTypeError, TileLangUnsupportedError

SEED = 20261203


def votes(n, mask=0xFFFFFFFF):
    """Any[t] = any over t's warp of X > 0.5, All[t] = all over t's warp of X > -0.5 (lanes in `mask`)."""

    @T.prim_func
    def k(X: T.Tensor((n,), "float32"), Any: T.Tensor((n,), "int32"), All: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            Any[tx] = T.any_sync(X[tx] > 0.5, mask)
            All[tx] = T.all_sync(X[tx] > -0.5, mask)

    return k


def _inputs(n, p_any, p_all):
    r = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    x = np.where(r.random(n) < p_any, 1.0, 0.0).astype(np.float32)  # > 0.5 with probability p_any
    x[r.random(n) < p_all] = -1.0  # fails > -0.5 with probability p_all
    return x


def _reference(x, width, mask):
    lanes = np.arange(len(x)) % width
    member = ((mask >> (lanes % 32)) & 1).astype(bool) if width == 32 else np.ones(len(x), bool)
    a, b = np.zeros(len(x), np.int32), np.zeros(len(x), np.int32)
    for w in range(len(x) // width):
        s = slice(w * width, (w + 1) * width)
        m = member[s]
        a[s] = np.any((x[s] > 0.5)[m])
        b[s] = np.all((x[s] > -0.5)[m])
    return a, b


@pytest.mark.parametrize("target,width", [("cuda", 32), ("hip", 64), ("metal", 32)])
@pytest.mark.parametrize("p_any,p_all", [(0.02, 0.0), (0.0, 0.02), (0.5, 0.5)])
def test_votes_match_numpy_in_the_emulator(target, width, p_any, p_all):
    x = _inputs(256, p_any, p_all)
    got_any, got_all = np.full(256, -7, np.int32), np.full(256, -7, np.int32)
    tilelang.compile(votes(256), target=target, execution_backend="emulator")(x, got_any, got_all)
    want_any, want_all = _reference(x, width, 0xFFFFFFFF)
    np.testing.assert_array_equal(got_any != 0, want_any != 0)
    np.testing.assert_array_equal(got_all != 0, want_all != 0)
    # the inputs give both outcomes somewhere unless a probability is 0
    assert (p_any == 0 or want_any.any()) and (p_all == 0 or not want_all.all())


def test_a_lane_mask_votes_over_its_lanes_only():
    x = _inputs(128, 0.1, 0.1)
    mask = 0x0000FFF0  # lanes 4..15 of each warp
    got_any, got_all = np.zeros(128, np.int32), np.zeros(128, np.int32)
    tilelang.compile(votes(128, mask), target="cuda", execution_backend="emulator")(x, got_any, got_all)
    want_any, want_all = _reference(x, 32, mask)
    np.testing.assert_array_equal(got_any != 0, want_any != 0)
    np.testing.assert_array_equal(got_all != 0, want_all != 0)


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "hip", "metal"])
def test_generated_sources_compile(target):
    k = tilelang.compile(votes(128), target=target)
    src = k.get_kernel_source()
    if target == "metal":
        assert "simd_any(" in src and "simd_all(" in src
    else:
        assert "tl::any_sync(" in src and "tl::all_sync(" in src
    if target.startswith("cuda"):
        ptx = k.get_ptx()
        assert "vote.sync.any.pred" in ptx and "vote.sync.all.pred" in ptx
    if target == "hip":  # the wave's 64-bit ballot compared in scalar registers
        asm = k.get_assembly()
        assert "s_cmp_lg_u64" in asm and "s_cmp_eq_u64" in asm, asm


@pytest.mark.parametrize("target,what", [("cpu", "no warps"), ("opencl", "no fixed-size warps")])
def test_targets_without_warps_refuse_it_at_the_line(target, what):
    with pytest.raises(TileLangUnsupportedError, match=what) as e:
        tilelang.compile(votes(64), target=target)
    assert "test_warp_votes.py" in str(e.value) and "T.any_sync" in str(e.value)


def test_a_partial_mask_on_a_wave_of_64_is_refused():
    """before: HIP ignored the mask (as TileLang does); expected: a clear error at the line."""
    with pytest.raises(TileLangUnsupportedError, match="wave of 64") as e:
        tilelang.compile(votes(64, 0xFFFF), target="hip", execution_backend="emulator")
    assert "test_warp_votes.py" in str(e.value)


def test_metal_votes_over_the_whole_simdgroup_only():
    with pytest.raises(TileLangUnsupportedError, match="whole simdgroup"):
        tilelang.compile(votes(64, 0xFFFF), target="metal")


def test_bad_arguments_are_type_errors():
    with pytest.raises(TileLangTypeError, match="predicate"):
        @T.prim_func
        def k(X: T.Tensor((32,), "float32"), Y: T.Tensor((32,), "int32")):
            with T.Kernel(1, threads=32):
                tx = T.get_thread_binding()
                Y[tx] = T.any_sync(X[tx])
    with pytest.raises(TileLangTypeError, match="32 bits"):
        @T.prim_func
        def k2(X: T.Tensor((32,), "float32"), Y: T.Tensor((32,), "int32")):
            with T.Kernel(1, threads=32):
                tx = T.get_thread_binding()
                Y[tx] = T.all_sync(X[tx] > 0, 1 << 40)
