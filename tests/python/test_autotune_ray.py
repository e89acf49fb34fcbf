"""@tilelang.autotune(executor="ray") on a local Ray instance (2 CPUs, no dashboard): the same choice and the
same skip reasons as the local pool on the same inputs, static pruning in the driver, compiled libraries
shipped as bytes between separate kernel caches, and Ray faults (a worker killed mid-sweep) costing only
their candidates. Also, without a cluster: the optional-extra error, the executor setting, the artefact
round trip of a CPU and a CUDA build, and the CUDA static checks (shared memory, registers, layouts)."""
import os
import sys
import time

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.autotuner import artefacts, ray_executor, static_check
from tilelang.errors import TileLangArgumentError, TileLangUnsupportedError
from tilelang.jit import clear_compile_memo

# The sweep's choice, its 10 s compile timeouts and a killed worker's retry read the machine's time: these
# run alone (scripts/test.sh runs `-m serial` after the parallel run), not beside another pytest worker.
pytestmark = pytest.mark.serial

HERE = os.path.dirname(os.path.abspath(__file__))


def gemm(M, N, K, block_M=64, block_N=64, block_K=32, repeat=1, drop_k=0, sleep=0, dtype="float32"):
    """C = A @ B; `repeat` recomputes it (same result, `repeat` times the work: a config that is slow for
    sure), `drop_k` skips the last K tiles (a wrong result), `sleep` stalls the factory on Ray workers (a
    compile that never ends)."""
    if sleep and os.environ.get("TL_TEST_RAY_WORKER"):
        time.sleep(sleep)

    @T.prim_func
    def gemm_kernel(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            for _ in T.serial(repeat):
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, block_K) - drop_k, num_stages=2):
                    T.copy(A[by * block_M, k * block_K], A_s)
                    T.copy(B[k * block_K, bx * block_N], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return gemm_kernel


def ref(A, B):
    return A.astype(np.float64) @ B.astype(np.float64)


# Ragged sizes (no tile divides them). Valid configs that repeat the product 32 times (slow for sure), two
# with a wrong result (one of them fast), eight that lowering alone rejects (a division by zero in the factory,
# an empty tile, on-chip buffers over the CPU target's budget), and the one fast valid config (last, so that
# the winner is not simply the first candidate timed): the winner is unambiguous on a noisy machine, when the
# kernels time on one thread (one_thread_kernels).
SIZES = (120, 104, 96)
SLOW = 32
CONFIGS = [{"block_M": m, "block_N": n, "repeat": SLOW}
           for m, n in [(64, 64), (32, 32), (32, 64), (128, 128), (16, 64)]] + \
    [{"block_M": 64, "block_N": 64, "drop_k": 1}, {"block_M": 32, "block_N": 32, "drop_k": 2, "repeat": SLOW}] + \
    [{"block_M": 0}, {"block_N": 0, "repeat": SLOW}, {"block_K": 0}, {"block_M": 8192, "block_N": 8192},
     {"block_M": 8192, "block_N": 16384, "block_K": 64}, {"block_M": 16384, "block_N": 4096},
     {"block_M": 4096, "block_N": 16384, "repeat": SLOW}, {"block_M": 16384, "block_N": 16384}] + \
    [{"block_M": 64, "block_N": 64}]
WRONG = {5, 6}
PRUNED = set(range(7, 15))
DIVISION, EMPTY_TILE, ON_CHIP = {7, 8}, 9, {10, 11, 12, 13, 14}
FAST = 15


def _tuner(executor, **kw):
    kw = {"warmup": 3, "rep": 60, "ref_prog": ref, "atol": 1e-3, "rtol": 1e-3, "return_mode": "min", **kw}
    return tilelang.autotune(configs=CONFIGS, executor=executor, **kw)(tilelang.jit(out_idx=[2], target="cpu")(gemm))


@pytest.fixture(scope="module")
def ray_local():
    import ray  # the optional extra: scripts/setup.sh installs it
    env = {"PYTHONPATH": os.pathsep.join([HERE] + [p for p in sys.path if p and os.path.isdir(p)]),
           "TL_TEST_RAY_WORKER": "1"}
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": env}, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def separate_caches(tmp_path, monkeypatch):
    """The driver, the compile tasks and the benchmark tasks each get their own kernel cache, as on separate
    machines: whatever the benchmark side loads without compiling came as bytes."""
    dirs = {k: tmp_path / k for k in ("driver", "compile", "bench")}
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(dirs["driver"]))
    monkeypatch.setattr(ray_executor, "TEST_CACHE_DIRS", {"compile": str(dirs["compile"]), "bench": str(dirs["bench"])})
    return dirs


@pytest.fixture
def one_thread_kernels(monkeypatch):
    """CPU kernels time on one OpenMP thread, here and on the Ray workers. On a 2-core machine shared with
    other jobs, a 2-thread kernel runs only while both its threads hold a core, so even its fastest run
    reads whole scheduler slices (8 ms for a 0.1 ms kernel); one thread's fastest run is its real time."""
    import ctypes

    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the Ray benchmark tasks take the driver's setting
    gomp = ctypes.CDLL("libgomp.so.1")  # the OpenMP runtime the kernels link: already loaded, or loaded now
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(1)
    try:
        yield
    finally:
        gomp.omp_set_num_threads(before)


def _entries(d):
    return sorted(p for p in os.listdir(d) if len(p) == 32) if os.path.isdir(d) else []


def test_ray_matches_local_pool(ray_local, separate_caches, one_thread_kernels, monkeypatch, tmp_path, capsys):
    dirs = separate_caches
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "local"))
    local = _tuner("local", use_cache=False)(*SIZES)
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(dirs["driver"]))
    capsys.readouterr()
    tuned = _tuner("ray")
    result = tuned(*SIZES)
    err = capsys.readouterr().err

    # the same outcome per candidate: status and reason (the pruned ones too), the same valid set and winner
    assert result.executor == "ray" and local.executor == "local"
    assert [(r.status, r.reason) for r in result.results] == [(r.status, r.reason) for r in local.results]
    valid = {r.index for r in local.results if r.ok}
    assert valid == set(range(len(CONFIGS))) - WRONG - PRUNED
    assert {r.index for r in result.results if r.ok} == valid
    assert all(local.results[i].status == "wrong" and "differs from ref_prog" in local.results[i].reason for i in WRONG)
    for run in (local, result):
        print(run.executor, [round(r.latency, 3) if r.ok else r.status for r in run.results])
    assert local.config is CONFIGS[FAST] and result.config is CONFIGS[FAST]

    # pruned in the driver by lowering alone, counted and said; nothing else was
    assert result.pruned == len(PRUNED) and {r.index for r in result.results if r.pruned} == PRUNED
    assert not any(r.pruned for r in local.results)
    assert all("division" in result.results[i].reason for i in DIVISION)
    assert "must be positive" in result.results[EMPTY_TILE].reason
    assert all("on-chip buffers" in result.results[i].reason for i in ON_CHIP)
    assert f"pruned {len(PRUNED)} of {len(CONFIGS)} configurations statically" in err
    assert "compiling gemm (ray)" in err and "benchmarking gemm (ray)" in err  # the progress bars

    # compiled and timed by Ray workers, the library shipped as bytes: each valid candidate was loaded from
    # the entry the bytes wrote into the benchmark cache, identical to the compile cache's
    sent = set(range(len(CONFIGS))) - PRUNED
    for i in sent:
        r = result.results[i]
        assert r.worker and r.bench_worker and not r.worker.endswith(f":{os.getpid()}")
        assert r.loaded_from_bytes is True, (i, r)
    assert len(_entries(dirs["compile"])) == len(sent) and _entries(dirs["bench"]) == _entries(dirs["compile"])
    for key in _entries(dirs["bench"]):
        assert (dirs["bench"] / key / "kernel.so").read_bytes() == (dirs["compile"] / key / "kernel.so").read_bytes()
    # the driver compiled nothing: the best kernel's entry came back as bytes
    assert result.kernel.from_cache and len(_entries(dirs["driver"])) == 1
    assert result.ref_latency is not None and result.ref_latency > 0

    seed = int(os.environ.get("TL_TEST_SEED", "19"))
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(SIZES[::2]).astype(np.float32)
    B = rng.standard_normal(SIZES[:0:-1]).astype(np.float32)
    np.testing.assert_allclose(result(A, B), ref(A, B), rtol=1e-4, atol=1e-4)

    # the best config is cached: a fresh tuner answers from disk, without the cluster
    again = _tuner("ray")(*SIZES)
    assert again.from_cache and again.config == result.config and again.latency == result.latency
    assert [r.pruned for r in again.results] == [r.pruned for r in result.results]
    assert again.results[10].reason == result.results[10].reason


FAULT_CONFIGS = [{"block_M": 32, "block_N": 32}, {"block_M": 64, "block_N": 64}, {"block_M": 32, "block_N": 64},
                 {"block_M": 64, "block_N": 32}, {"block_M": 16, "block_N": 16, "sleep": 600}]


def test_ray_faults_cost_only_their_candidates(ray_local, separate_caches, capsys):
    # candidate 1: its compile worker dies once (retried, fine); 2: dies twice (reported); 3: its benchmark
    # worker dies once (retried, fine); 4: compiles for ever (killed at the timeout); 0: untouched
    ray_executor.TEST_FAULTS.update({("compile", 1): 1, ("compile", 2): 2, ("bench", 3): 1})
    try:
        tuned = tilelang.autotune(configs=FAULT_CONFIGS, warmup=1, rep=5, ref_prog=ref, atol=1e-3, rtol=1e-3,
                                  timeout=10, use_cache=False, executor="ray")(
            tilelang.jit(out_idx=[2], target="cpu")(gemm))
        t0 = time.time()
        result = tuned(64, 64, 32)
        took = time.time() - t0
    finally:
        ray_executor.TEST_FAULTS.clear()
    status = [r.status for r in result.results]
    assert status == ["ok", "ok", "worker_lost", "ok", "timeout"], [(r.status, r.reason) for r in result.results]
    assert "lost twice" in result.results[2].reason and "WorkerCrashedError" in result.results[2].reason
    assert result.results[4].reason == "compilation timed out (over 10 s)"
    assert took < 120  # the sleeping compile (600 s) was killed, not waited for
    err = capsys.readouterr().err
    assert err.count("retrying it once") == 3
    assert all(result.results[i].loaded_from_bytes for i in (0, 1, 3))
    assert result.config in [FAULT_CONFIGS[i] for i in (0, 1, 3)]


def test_executor_setting_and_missing_extra(monkeypatch):
    factory = tilelang.jit(out_idx=[2], target="cpu")(gemm)
    with pytest.raises(TileLangArgumentError, match="'local'.*'ray'"):
        tilelang.autotune(configs=CONFIGS, executor="dask")(factory)
    monkeypatch.setenv("TILELANG_AUTOTUNE_EXECUTOR", "ray")
    assert tilelang.autotune(configs=CONFIGS)(factory).tuner._executor() == "ray"
    monkeypatch.setenv("TILELANG_AUTOTUNE_EXECUTOR", "")
    assert tilelang.autotune(configs=CONFIGS)(factory).tuner._executor() == "local"
    monkeypatch.setenv("TILELANG_AUTOTUNE_EXECUTOR", "slurm")
    with pytest.raises(TileLangArgumentError, match="TILELANG_AUTOTUNE_EXECUTOR='slurm'"):
        tilelang.autotune(configs=CONFIGS, use_cache=False)(factory)(*SIZES)
    # without Ray installed: executor="ray" names the extra, at decoration and (from the environment) at the call
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(TileLangUnsupportedError, match=r"tilelang-cpp\[ray\]"):
        tilelang.autotune(configs=CONFIGS, executor="ray")(factory)
    monkeypatch.setenv("TILELANG_AUTOTUNE_EXECUTOR", "ray")
    with pytest.raises(TileLangUnsupportedError, match=r"tilelang-cpp\[ray\]"):
        tilelang.autotune(configs=CONFIGS, use_cache=False, verbose=False)(factory)(*SIZES)


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
def test_artefact_round_trip(target, tmp_path, monkeypatch):
    """A build packed from one cache and unpacked into another loads there without compiling; a corrupt
    entry is not loaded (the receiving cache's own checks stand)."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "a"))
    dtype = "float32" if target == "cpu" else "float16"
    func = gemm(*SIZES, block_M=32, block_N=32, dtype=dtype)
    kernel = tilelang.compile(func, out_idx=[2], target=target)  # CUDA: a cubin from NVRTC, no GPU needed
    art = artefacts.pack(kernel)
    assert art is not None and set(art["files"]) >= {"kernel.meta"}
    assert art["entry"].startswith("cuda/") == target.startswith("cuda")
    clear_compile_memo()
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "b"))
    artefacts.unpack(art)
    again = tilelang.compile(gemm(*SIZES, block_M=32, block_N=32, dtype=dtype), out_idx=[2], target=target)
    assert again.from_cache and again.get_kernel_source() == kernel.get_kernel_source()
    if target == "cpu":
        rng = np.random.default_rng(7)
        A = rng.standard_normal(SIZES[::2]).astype(np.float32)
        B = rng.standard_normal(SIZES[:0:-1]).astype(np.float32)
        np.testing.assert_allclose(again(A, B), ref(A, B), rtol=1e-4, atol=1e-4)
    else:
        assert again.get_ptx() == kernel.get_ptx()
    # a corrupted library is refused by the receiver's cache and rebuilt, not loaded
    clear_compile_memo()
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "c"))
    bad = {"entry": art["entry"], "files": dict(art["files"])}
    name = "kernel.so" if target == "cpu" else "kernel.cubin"
    bad["files"][name] = bad["files"][name][:-16] + b"\0" * 16
    artefacts.unpack(bad)
    rebuilt = tilelang.compile(gemm(*SIZES, block_M=32, block_N=32, dtype=dtype), out_idx=[2], target=target)
    assert not rebuilt.from_cache
    with pytest.raises(TileLangUnsupportedError, match="not a kernel cache entry"):
        artefacts.unpack({"entry": "../etc", "files": art["files"]})


def test_cuda_static_checks():
    """What the driver prunes for a CUDA target, by lowering alone: shared memory over the arch's limit,
    per-thread fragments over the register limit; a config within both passes."""
    opts = {"target": "cuda -arch=sm_80"}
    static_check.lowering_check(gemm(256, 256, 256, block_M=64, block_N=64, dtype="float16"), opts)
    with pytest.raises(tilelang.errors.TileLangResourceError, match="shared memory|limit"):
        static_check.lowering_check(gemm(1024, 1024, 1024, block_M=256, block_N=256, block_K=256,
                                                dtype="float16"), opts)
    with pytest.raises(tilelang.errors.TileLangResourceError, match=r"at least \d+ 32-bit registers.*255-reg") as e:
        static_check.lowering_check(gemm(512, 512, 512, block_M=256, block_N=256, block_K=16,
                                                dtype="float16"), opts, gemm)
    line = next(i for i, t in enumerate(open(__file__), 1) if "def gemm_kernel(" in t)
    assert str(e.value).startswith(f"{__file__}:{line}:")


def test_ray_cuda_targets(ray_local, tmp_path, monkeypatch):
    """A CUDA target's candidates are timed on GPU workers: a cluster without GPUs is told, before anything
    is sent, with the way out. With the emulator they run on CPU workers, and the driver prunes with the
    CUDA pipeline's limits (shared memory, registers) before sending."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    configs = [{"block_M": 32, "block_N": 32}, {"block_M": 256, "block_N": 256, "block_K": 16},
               {"block_M": 256, "block_N": 256, "block_K": 256}, {"block_M": 16, "block_N": 32}]
    on_gpu = tilelang.autotune(configs=configs, use_cache=False, executor="ray")(
        tilelang.jit(out_idx=[2], target="cuda -arch=sm_80")(gemm))
    with pytest.raises(TileLangArgumentError, match="no GPU.*emulator"):
        on_gpu(32, 32, 32, dtype="float16")
    # (one compile task in flight at a time: max_workers bounds the Ray executor's compile tasks)
    emulated = tilelang.autotune(configs=configs, warmup=1, rep=3, ref_prog=ref, use_cache=False, verbose=False,
                                 max_workers=1, executor="ray")(
        tilelang.jit(out_idx=[2], target="cuda -arch=sm_80", execution_backend="emulator")(gemm))
    result = emulated(32, 32, 32, dtype="float16")
    assert [r.status for r in result.results] == ["ok", "compile_error", "compile_error", "ok"]
    assert result.pruned == 2 and result.results[1].pruned and result.results[2].pruned
    assert "32-bit registers" in result.results[1].reason and "shared memory" in result.results[2].reason
    assert result.config in (configs[0], configs[3]) and result.kernel.execution_backend == "emulator"
