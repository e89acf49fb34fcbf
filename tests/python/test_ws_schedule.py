"""TileLang's warp-specialisation schedule (T.annotate_ws_schedule with T.WSSchedule / T.WSRole / T.WSPipeline /
T.WSSync / T.WSScope, ops named by T.WSID and T.ws_op): the straight-line kernel plus the schedule becomes, on
sm_90a, one branch per role with multi-versioned buffers and full/empty mbarriers (docs/warp_specialization.md,
"Schedules"). Checked in NVRTC's PTX and in the emulator against float64 NumPy on seeded random inputs at ragged
sizes (race, bounds and uninitialised-read checks on); elsewhere the kernel runs as written, with a warning."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError, TileLangTypeError


SM90A = "cuda -arch=sm_90a"


def _rng():
    seed = int(os.environ.get("TL_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def _ab(M, N, K):
    rng = _rng()
    return rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def _scheduled_gemm(M, N, K, bm=128, bn=128, bk=64, stages=2, producer_nreg=40, consumer_nreg=232,
                    one_role=False):
    """A plain T.Pipelined GEMM (what runs where the schedule cannot) and a schedule for it: warp group 0 loads
    the A and B tiles into `stages` versions, warp group 1 clears, multiplies and stores. one_role: one warp group
    does both, its loads at stage 0 and its math at stage 1 (a software pipeline)."""
    load = [T.WSSync.producer_acquire("tiles"), "load_a", "load_b", T.WSSync.producer_commit("tiles")]
    math_stage = 1 if one_role else 0
    math = [T.WSSync.consumer_wait("tiles", stage=math_stage), "mma",
            T.WSSync.consumer_release("tiles", stage=math_stage)]
    if one_role:
        roles = [T.WSRole("all", warps_lo=0, warps_hi=4)]
        scopes = [T.WSScope("k_loop", {"all": load + math}),
                  T.WSScope(T.WSScope.ROOT, {"all": ["zero", "row", "k_loop", "store"]})]
    else:
        roles = [T.WSRole("load", warps_lo=0, warps_hi=4, max_nreg=producer_nreg),
                 T.WSRole("math", warps_lo=4, warps_hi=8, max_nreg=consumer_nreg)]
        scopes = [T.WSScope("k_loop", {"load": load, "math": math}),
                  T.WSScope(T.WSScope.ROOT, {"load": ["k_loop"], "math": ["zero", "row", "k_loop", "store"]})]

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.annotate_ws_schedule(T.WSSchedule(num_warps=4 if one_role else 8, roles=roles,
                                                pipelines=[T.WSPipeline("tiles", [A_s, B_s], depth=stages)],
                                                scopes=scopes))
            T.clear(acc, annotations={T.WSID: "zero"})
            with T.ws_op("row"):
                r0 = by * bm
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages, annotations={T.WSID: "k_loop"}):
                T.copy(A[by * bm, k * bk], A_s, annotations={T.WSID: "load_a"})
                T.copy(B[k * bk, bx * bn], B_s, annotations={T.WSID: "load_b"})
                T.gemm(A_s, B_s, acc, annotations={T.WSID: "mma"})
            T.copy(acc, C[r0, bx * bn], annotations={T.WSID: "store"})

    return main


@pytest.mark.parametrize("stages", [2, 3])
def test_scheduled_gemm_is_warp_specialized_and_matches_numpy(stages):
    """Before: T.annotate_ws_schedule, T.WSSchedule, T.ws_op and T.WSID were missing names. Expected: 256 threads;
    warp group 0 gives registers back (setmaxnreg.dec 40) and issues TMA copies into `stages` versions that complete
    on the pipeline's full mbarriers, warp group 1 takes registers (setmaxnreg.inc 232), waits, runs wgmma on the
    version and arrives on the empty mbarrier; the product matches NumPy at ragged sizes in the emulator."""
    M, N, K = 200, 136, 224
    func = _scheduled_gemm(M, N, K, stages=stages)
    k = tilelang.compile(func, target=SM90A)
    ptx = k.get_ptx()
    assert "setmaxnreg.dec.sync.aligned.u32 40" in ptx and "setmaxnreg.inc.sync.aligned.u32 232" in ptx
    assert "cp.async.bulk.tensor" in ptx and "wgmma.mma_async" in ptx and "mbarrier.try_wait.parity" in ptx
    assert "__launch_bounds__(256, 1)" in k.get_kernel_source()  # setmaxnreg: one block per SM
    assert not any("C7508" in w for w in k.warnings), k.warnings
    # both copies complete on the pipeline barrier: no wait of the producer's own
    assert sum("scheduled producer copy): TMA" in c for c in k.choices) == 2, k.choices
    src = k.get_kernel_source()
    assert f"tiles_full[{stages - 1}]" in src and f"tiles_empty[{stages - 1}]" in src
    ke = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    a, b = _ab(M, N, K)
    c = np.full((M, N), np.nan, np.float32)
    ke(a, b, c)
    np.testing.assert_allclose(c, _ref(a, b), rtol=1e-3, atol=1e-3)


def test_a_role_whose_stages_differ_runs_a_software_pipeline():
    """One warp group loads at stage 0 and multiplies at stage 1: iteration k of its loop loads tile k and multiplies
    tile k - 1 (the loop runs once more, each entry guarded), so a TMA load is in flight during each wgmma; the
    product is the same."""
    M, N, K = 136, 128, 320
    func = _scheduled_gemm(M, N, K, stages=2, one_role=True)
    ke = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    src = ke.get_kernel_source()
    assert "k_staged" in src, src
    a, b = _ab(M, N, K)
    c = np.full((M, N), np.nan, np.float32)
    ke(a, b, c)
    np.testing.assert_allclose(c, _ref(a, b), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "cpu"])
def test_without_warp_specialisation_the_kernel_runs_as_written(target):
    """Before: the names were missing. Expected on targets without setmaxnreg / warp-group regions: a warning
    naming the target, and the straight-line kernel (128 threads, its T.Pipelined loop) computes the product."""
    M, N, K = 72, 136, 96
    func = _scheduled_gemm(M, N, K)
    with pytest.warns(Warning, match="has no warp specialisation"):
        k = tilelang.compile(func, target=target, execution_backend="emulator" if "cuda" in target else "auto")
    if "cuda" in target:
        assert "__launch_bounds__(128)" in k.get_kernel_source()
    a, b = _ab(M, N, K)
    c = np.full((M, N), np.nan, np.float32)
    k(a, b, c)
    np.testing.assert_allclose(c, _ref(a, b), rtol=1e-3, atol=1e-3)


def _persistent_gemm(M, N, K, bm=128, bn=128, bk=64, stages=2, workers=3):
    """A persistent scheduled GEMM: every role runs its own `while sched.valid()` loop (a scope named by T.ws_op), the
    tile coordinates are lets named by T.ws_op, and the pipeline's versions continue across tiles."""
    m_blocks, n_blocks = T.ceildiv(M, bm), T.ceildiv(N, bn)

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(workers, threads=128) as wid:
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            sched = T.PersistentTileScheduler(m_blocks, n_blocks, num_workers=workers, name="sched")
            T.annotate_ws_schedule(T.WSSchedule(
                num_warps=8,
                roles=[T.WSRole("load", warps_lo=0, warps_hi=4, max_nreg=40),
                       T.WSRole("math", warps_lo=4, warps_hi=8, max_nreg=232)],
                pipelines=[T.WSPipeline("tiles", [A_s, B_s], depth=stages)],
                scopes=[
                    T.WSScope("k_loop", {
                        "load": [T.WSSync.producer_acquire("tiles"), "load_a", "load_b",
                                 T.WSSync.producer_commit("tiles")],
                        "math": [T.WSSync.consumer_wait("tiles"), "mma", T.WSSync.consumer_release("tiles")],
                    }),
                    T.WSScope("tiles_loop", {
                        "load": ["coords", "k_loop", "advance"],
                        "math": ["coords", "zero", "k_loop", "store", "advance"],
                    }),
                    T.WSScope(T.WSScope.ROOT, {"load": ["start", "tiles_loop"], "math": ["start", "tiles_loop"]}),
                ]))
            with T.ws_op("start"):
                sched.init(wid)
            with T.ws_op("tiles_loop"):
                while sched.valid():
                    with T.ws_op("coords"):
                        bx = sched.m_idx
                        by = sched.n_idx
                    T.clear(acc, annotations={T.WSID: "zero"})
                    for k in T.serial(T.ceildiv(K, bk), annotations={T.WSID: "k_loop"}):
                        T.copy(A[bx * bm, k * bk], A_s, annotations={T.WSID: "load_a"})
                        T.copy(B[k * bk, by * bn], B_s, annotations={T.WSID: "load_b"})
                        T.gemm(A_s, B_s, acc, annotations={T.WSID: "mma"})
                    T.copy(acc, C[bx * bm, by * bn], annotations={T.WSID: "store"})
                    with T.ws_op("advance"):
                        sched.next_tile()

    return main


def test_persistent_schedule_with_a_while_scope_and_named_lets():
    """Three workers over 2 x 3 tiles: each role inits its own scheduler registers and loops while its tile is
    valid; the version counters run on across tiles (k_loop's second run starts where the first ended)."""
    M, N, K = 200, 296, 192
    func = _persistent_gemm(M, N, K)
    ke = tilelang.compile(func, target=SM90A, execution_backend="emulator")
    a, b = _ab(M, N, K)
    c = np.full((M, N), np.nan, np.float32)
    ke(a, b, c)
    np.testing.assert_allclose(c, _ref(a, b), rtol=1e-3, atol=1e-3)


def _schedule_error(body_kind):
    M = N = K = 128

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            math = ["zero", "k_loop", "store"] if body_kind != "unplaced" else ["k_loop", "store"]
            T.annotate_ws_schedule(T.WSSchedule(
                num_warps=8,
                roles=[T.WSRole("load", warps_lo=0, warps_hi=4), T.WSRole("math", warps_lo=4, warps_hi=8)],
                pipelines=[T.WSPipeline("tiles", [A_s, B_s], depth=2)],
                scopes=[
                    T.WSScope("k_loop", {
                        "load": [T.WSSync.producer_acquire("tiles"), "load_a", "load_b",
                                 T.WSSync.producer_commit("tiles")],
                        "math": (["mma"] if body_kind == "outside" else
                                 [T.WSSync.consumer_wait("tiles"), "mma", T.WSSync.consumer_release("tiles")]),
                    }),
                    T.WSScope(T.WSScope.ROOT, {"load": ["k_loop"], "math": math}),
                ]))
            if body_kind == "no_id":
                T.clear(acc)
            else:
                T.clear(acc, annotations={T.WSID: "zero"})
            for k in T.serial(2, annotations={T.WSID: "k_loop"}):
                T.copy(A[0, k * 64], A_s, annotations={T.WSID: "load_a"})
                T.copy(B[k * 64, 0], B_s, annotations={T.WSID: "load_b"})
                T.gemm(A_s, B_s, acc, annotations={T.WSID: "mma"})
            T.copy(acc, C[0, 0], annotations={T.WSID: "store"})

    return main


@pytest.mark.parametrize("kind,message", [
    ("no_id", r"this statement has no ws op id"),
    ("unplaced", r"op 'zero' is in no role's program"),
    ("outside", r"op 'mma' of role 'math' uses 'A_s', which pipeline 'tiles' protects .* outside an acquire/commit"),
])
def test_schedule_mistakes_are_errors_at_the_users_line(kind, message):
    """A statement the schedule cannot place, an op no role runs, a protected buffer used outside its spans: each a
    TileLangSyntaxError at the line of the statement (or of the schedule), not a silently different kernel."""
    func = _schedule_error(kind)
    with pytest.raises(TileLangSyntaxError, match=message) as e:
        tilelang.compile(func, target=SM90A)
    assert "test_ws_schedule.py:" in str(e.value)


def test_schedule_objects_check_their_arguments():
    with pytest.raises(TileLangTypeError, match="overlap"):
        T.WSSchedule(8, [T.WSRole("a", warps_lo=0, warps_hi=5), T.WSRole("b", warps_lo=4, warps_hi=8)], [],
                     [T.WSScope(T.WSScope.ROOT, {})])
    with pytest.raises(TileLangTypeError, match="multiple of 4"):
        T.WSSchedule(6, [], [], [T.WSScope(T.WSScope.ROOT, {})])
    with pytest.raises(TileLangTypeError, match="not one of the schedule's roles"):
        T.WSSchedule(4, [T.WSRole("a", warps_lo=0, warps_hi=4)], [], [T.WSScope(T.WSScope.ROOT, {"b": []})])
    with pytest.raises(TileLangTypeError, match="no root scope"):
        T.WSSchedule(4, [T.WSRole("a", warps_lo=0, warps_hi=4)], [], [])
    with pytest.raises(TileLangTypeError, match="max_nreg"):
        T.WSRole("a", warps_lo=0, warps_hi=4, max_nreg=100)
    assert T.WSID == "tl.ws_op_id" and T.WSSync.consumer_wait("p", stage=2).stage == 2
    assert T.WSSync.producer_commit("p").kind == T.WSSyncKind.PRODUCER_COMMIT


SM100A = "cuda -arch=sm_100a"


def _tmem_scheduled_gemm(M, N, K, bm=128, bn=128, bk=64, stages=3, workers=3, acc_versions=2):
    """A persistent Blackwell GEMM in the schedule's terms (TileLang's aws/gemm.py style): T.gemm accumulates into
    tensor memory (no mbarrier: the compiler waits for it), a "tiles" pipeline protects the shared operands and an
    "acc" pipeline `acc_versions` versions of the tensor-memory accumulator: warp 0 loads, warp 1 multiplies into a
    free version, warps 4-7 read a full one out and store it while the next tile is multiplied."""
    m_blocks, n_blocks = T.ceildiv(M, bm), T.ceildiv(N, bn)

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(workers, threads=128) as wid:
            A_s = T.alloc_shared((bm, bk), "bfloat16")
            B_s = T.alloc_shared((bn, bk), "bfloat16")
            C_t = T.alloc_tmem([bm, bn], "float32")
            C_l = T.alloc_fragment((bm, bn), "float32")
            sched = T.PersistentTileScheduler(m_blocks, n_blocks, num_workers=workers, name="sched")
            T.annotate_ws_schedule(T.WSSchedule(
                num_warps=8,
                roles=[T.WSRole("load", warps_lo=0, warps_hi=1, max_nreg=40),
                       T.WSRole("mma", warps_lo=1, warps_hi=2, max_nreg=40),
                       T.WSRole("epi", warps_lo=4, warps_hi=8, max_nreg=232)],
                pipelines=[T.WSPipeline("tiles", [A_s, B_s], depth=stages),
                           T.WSPipeline("acc", [C_t], depth=acc_versions)],
                scopes=[
                    T.WSScope("k_loop", {
                        "load": [T.WSSync.producer_acquire("tiles"), "load_a", "load_b",
                                 T.WSSync.producer_commit("tiles")],
                        "mma": [T.WSSync.consumer_wait("tiles"), "mma", T.WSSync.consumer_release("tiles")],
                        "epi": [],
                    }),
                    T.WSScope("tiles_loop", {
                        "load": ["coords", "k_loop", "advance"],
                        "mma": [T.WSSync.producer_acquire("acc"), "k_loop", T.WSSync.producer_commit("acc"),
                                "advance"],
                        "epi": ["coords", T.WSSync.consumer_wait("acc"), "read", T.WSSync.consumer_release("acc"),
                                "store", "advance"],
                    }),
                    T.WSScope(T.WSScope.ROOT, {"load": ["start", "tiles_loop"], "mma": ["start", "tiles_loop"],
                                               "epi": ["start", "tiles_loop"]}),
                ]))
            with T.ws_op("start"):
                sched.init(wid)
            with T.ws_op("tiles_loop"):
                while sched.valid():
                    with T.ws_op("coords"):
                        bx = sched.m_idx
                        by = sched.n_idx
                    for k in T.serial(T.ceildiv(K, bk), annotations={T.WSID: "k_loop"}):
                        T.copy(A[bx * bm, k * bk], A_s, annotations={T.WSID: "load_a"})
                        T.copy(B[by * bn, k * bk], B_s, annotations={T.WSID: "load_b"})
                        T.gemm(A_s, B_s, C_t, transpose_B=True, clear_accum=k == 0, annotations={T.WSID: "mma"})
                    T.copy(C_t, C_l, annotations={T.WSID: "read"})
                    T.copy(C_l, C[bx * bm, by * bn], annotations={T.WSID: "store"})
                    with T.ws_op("advance"):
                        sched.next_tile()

    return main


def test_a_pipeline_of_tensor_memory_versions_between_the_mma_and_the_epilogue():
    """Before: T.WSPipeline refused tensor memory and T.gemm into a T.alloc_tmem accumulator was an internal error.
    Expected: the accumulator becomes `acc_versions` x 128 x 128 columns of tensor memory; the MMA warp issues
    tcgen05.mma into the version it acquired and waits for them (a barrier of its own) before committing it to the
    epilogue warps, which read it out while the next tile is multiplied. Three workers over 2 x 3 tiles at a ragged
    size, against NumPy float64, in the emulator (its tensor-memory checks on)."""
    M, N, K = 200, 296, 192
    func = _tmem_scheduled_gemm(M, N, K)
    ke = tilelang.compile(func, target=SM100A, execution_backend="emulator")
    assert any("T.gemm into tensor memory 'C_t'" in c for c in ke.choices), ke.choices
    assert any("256 columns" in c for c in ke.choices if "tensor memory:" in c), ke.choices
    rng = _rng()
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    import ml_dtypes
    a16, b16 = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, np.float32)
    ke(a16, b16, c)
    ref = a16.astype(np.float64) @ b16.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4 * np.sqrt(K))
