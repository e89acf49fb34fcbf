"""executor="ray": compiling and benchmarking autotuning candidates on a Ray cluster.

The driver (the process that calls the tuned factory) prunes statically (static_check.py), then sends each
remaining candidate to a compile task (one CPU) and, once it compiled, to a benchmark task on a worker
holding the target's device: one GPU for CUDA, a whole CPU node for the CPU target (so no compile task
shares the cores it is timed on). Both tasks run the user's factory again from a pickled job (the factory,
the call's arguments, the jit options and the measuring options), so the workers must be able to import the
user's code (runtime_env working_dir / py_modules on a real cluster).

Artefacts travel as bytes: a compile task returns its kernel's disk-cache entry (artefacts.pack) as a
separate Ray object, which Ray moves to the benchmark task's node; the benchmark task writes it into that
node's kernel cache (artefacts.unpack) and builds the kernel through the ordinary path, which finds the
entry and loads it without compiling. The best candidate's entry comes back to the driver the same way.

Semantics follow the local pool: a failing candidate is skipped with its reason; the compile timeout runs
from the moment a worker starts the candidate (each task reports its start to a small clock actor, and the
driver cancels, and so kills, a task over its time); the benchmark's check is the local one (one run over
the timeout, a result differing from ref_prog). Ray faults are not the candidate's fault: a task whose
worker or node dies is retried once, and a candidate whose task dies twice is reported as "worker_lost".
"""
import os
import sys
import time

from ..errors import TileLangArgumentError, TileLangUnsupportedError
from . import artefacts

# Test hooks (the tests set them; nothing else should): {(phase, index): n} makes the first n attempts of
# that candidate's "compile" or "bench" task kill their worker process with os._exit; {phase: dir} makes
# that phase's tasks use `dir` as their kernel cache, as separate machines would.
TEST_FAULTS = {}
TEST_CACHE_DIRS = {}

_LOADED = {}  # in a worker: job id -> the unpickled job


def require_ray():
    try:
        import ray
    except ImportError:
        raise TileLangUnsupportedError(
            "executor='ray' needs Ray, which is an optional extra: pip install 'tilelang-cpp[ray]' (or pip install "
            "ray); without it, use executor='local' (the default)") from None
    return ray


def connect(ray, log):
    """Uses the Ray session of this process, else joins RAY_ADDRESS, else starts a local instance."""
    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        ray.init()
        log(f"joined the Ray cluster at {os.environ['RAY_ADDRESS']}")
        return
    # A local instance runs this machine's workers: they import the user's code from this sys.path.
    path = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    ray.init(include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    log("started a local Ray instance (call ray.init(address=...) first to use a cluster)")


# ---- in the workers ---------------------------------------------------------------------------------------
def _job(job_id, blob):
    job = _LOADED.get(job_id)
    if job is None:
        from ray import cloudpickle

        job = cloudpickle.loads(blob)
        _LOADED.clear()  # one sweep at a time per worker
        _LOADED[job_id] = job
    return job


def build(job, config):
    """The kernel of one configuration, as the job's jit options build it (in a worker or the driver)."""
    from ..jit import compile as _compile

    func = job["factory"](*job["args"], **job["kwargs"], **config)
    return _compile(func, **job["jit"])


class _CacheDir:
    """The kernel cache a phase's tasks use: the worker's own, or the test hook's."""

    def __init__(self, path):
        self.path, self.saved = path, None

    def __enter__(self):
        if self.path:
            self.saved = os.environ.get("TILELANG_CACHE_DIR")
            os.environ["TILELANG_CACHE_DIR"] = self.path

    def __exit__(self, *exc):
        if self.path:
            if self.saved is None:
                os.environ.pop("TILELANG_CACHE_DIR", None)
            else:
                os.environ["TILELANG_CACHE_DIR"] = self.saved


def _start(clock, phase, index, attempt, die):
    if clock is not None:
        clock.started.remote(phase, index, attempt)
    if die:
        os._exit(17)  # the test hook: this worker dies mid-sweep, as a lost node's would


def _where():
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def compile_task(job_id, blob, index, config, attempt, clock, die):
    """-> ((reason or None, seconds, where), artefact or None)."""
    from .compile_pool import describe_error

    _start(clock, "compile", index, attempt, die)
    t0 = time.perf_counter()
    try:
        job = _job(job_id, blob)
    except Exception as e:  # noqa: BLE001 -- e.g. the user's module is not importable on this worker
        return (f"the Ray worker cannot load the factory ({describe_error(e)}); make its module importable on the "
                "workers (ray.init(runtime_env={'working_dir': ...}) or py_modules)", None, _where()), None
    try:
        with _CacheDir(job["cache_dirs"].get("compile")):
            kernel = build(job, config)
            art = artefacts.pack(kernel)
        return (None, time.perf_counter() - t0, _where()), art
    except Exception as e:  # noqa: BLE001 -- every failure is a reason to skip the candidate
        return (describe_error(e), time.perf_counter() - t0, _where()), None


_INPUTS = {}  # in a worker: job id -> [inputs] shared by the candidates it times (cache_input_tensors)


def bench_task(job_id, blob, index, config, attempt, clock, die, artefact):
    """-> (status, latency, reason, where, loaded_from_bytes)."""
    from ..jit import clear_compile_memo
    from .measure import measure_kernel

    _start(clock, "bench", index, attempt, die)
    job = _job(job_id, blob)
    with _CacheDir(job["cache_dirs"].get("bench")):
        try:
            if artefact is not None:
                artefacts.unpack(artefact)
            clear_compile_memo()  # load through the disk cache, even where this process compiled it
            kernel = build(job, config)
        except Exception as e:  # noqa: BLE001
            from .compile_pool import describe_error

            return "compile_error", None, describe_error(e), _where(), False
        box = _INPUTS.setdefault(job_id, [None])
        if len(_INPUTS) > 1:
            _INPUTS.clear()
            _INPUTS[job_id] = box
        status, latency, reason = measure_kernel(kernel, job["measure"], box)
        return status, latency, reason, _where(), artefact is not None and bool(kernel.from_cache)


def ref_task(job_id, blob, config, artefact):
    """The reference program's time on a benchmarking worker (informative), or None."""
    job = _job(job_id, blob)
    m = job["measure"]
    if m["ref_prog"] is None:
        return None
    with _CacheDir(job["cache_dirs"].get("bench")):
        try:
            if artefact is not None:
                artefacts.unpack(artefact)
            prof = build(job, config).get_profiler(**m["profiler_kw"])
            inputs = prof.make_inputs()
            return float(prof.do_bench(lambda: m["ref_prog"](*inputs), warmup=m["warmup"], rep=m["rep"]))
        except Exception:  # noqa: BLE001 -- the reference's time is informative only
            return None


def device_arch_task():
    from .. import _ffi

    return _ffi.cuda_device_arch(0)


class Clock:
    """When each task started, on one clock (the actor's), for the driver's per-candidate timeouts."""

    def __init__(self):
        self.t = {}

    def started(self, phase, index, attempt):
        self.t[(phase, index, attempt)] = time.time()

    def running_over(self, seconds, keys):
        """Those of `keys` (the tasks still in flight) started more than `seconds` ago."""
        now = time.time()
        return [k for k in keys if k in self.t and now - self.t[k] > seconds]


# ---- in the driver ------------------------------------------------------------------------------------------
def _is_fault(ray, e):
    """A Ray-level failure (a worker, node or object lost), as opposed to a task's own error."""
    return isinstance(e, ray.exceptions.RayError) and not isinstance(e, ray.exceptions.RayTaskError)


def _node_cpus(ray):
    cpus = [n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) > 0]
    return max(1, int(min(cpus))) if cpus else 1


def resolve_target(ray, jit_options, log):
    """The jit options with a CUDA target's arch named (the GPUs' arch when the target does not say), and
    the benchmark tasks' resources."""
    from ..jit import target as _target

    opts = dict(jit_options)
    opts["target"] = _target.default_target(opts.get("target"))
    kind, topts = _target.normalize(opts["target"])
    if kind == "cpu":
        # Each benchmark holds a whole node, so nothing else runs on the cores it is timed on. The kernel's
        # OpenMP threads: the driver's OMP_NUM_THREADS when set (what the local executor would time with),
        # else every core held (Ray itself would give the worker OMP_NUM_THREADS=1). The env var also keeps
        # the timing workers apart from the compiling ones, whose OpenMP runtime may be started already.
        n = _node_cpus(ray)
        threads = os.environ.get("OMP_NUM_THREADS") or str(n)
        return opts, {"num_cpus": n, "runtime_env": {"env_vars": {"OMP_NUM_THREADS": threads}}}
    if kind != "cuda":
        return opts, {"num_cpus": 1}
    if opts.get("execution_backend") == "emulator":
        opts["target"] = str(_target.Target(opts["target"]))
        return opts, {"num_cpus": 1}
    if not ray.cluster_resources().get("GPU", 0):
        raise TileLangArgumentError("executor='ray' benchmarks CUDA candidates on GPU workers, but the Ray cluster has "
                                    "no GPU; add GPU nodes (ray start --num-gpus=...) or use "
                                    "execution_backend='emulator'")
    if "arch" not in topts:
        arch = ray.get(ray.remote(num_gpus=1)(device_arch_task).remote())
        opts["target"] = f"cuda -arch={arch}"
        log(f"compiling for the GPU workers' arch {arch}")
    return opts, {"num_gpus": 1, "num_cpus": 1}


def run(tuner, job, results, indices, compile_resources, bench_resources, timeout, bars, max_compiles=None):
    """Compiles and benchmarks results[i] for every i in indices on the cluster, pipelined; fills in each
    CandidateResult; at most `max_compiles` compile tasks are in flight at once (None: all). Returns (index of the fastest valid candidate or None, ObjectRef of its artefact, the
    job's blob ref, the job id)."""
    from ray import cloudpickle
    import ray

    blob = ray.put(cloudpickle.dumps(job))
    job_id = f"{os.getpid()}-{time.time_ns()}"
    clock = ray.remote(num_cpus=0)(Clock).remote() if timeout else None
    compile_fn = ray.remote(compile_task).options(num_returns=2, max_retries=0, **compile_resources)
    bench_fn = ray.remote(bench_task).options(max_retries=0, **bench_resources)
    kill = dict(TEST_FAULTS)
    inflight = {}  # status ref -> (phase, index, attempt, artefact ref)
    best = [None, None]  # the fastest valid candidate so far and its artefact ref (the others are let go)

    def submit(phase, i, attempt, art=None):
        die = attempt < kill.get((phase, i), 0)
        cfg = results[i].config
        if phase == "compile":
            status, art = compile_fn.remote(job_id, blob, i, cfg, attempt, clock, die)
        else:
            status = bench_fn.remote(job_id, blob, i, cfg, attempt, clock, die, art)
        inflight[status] = (phase, i, attempt, art)

    def drop(ref):
        # retrieve a dead task's other return once, so Ray does not report it as an unhandled error
        if ref is not None:
            try:
                ray.get(ref, timeout=0)
            except Exception:  # noqa: BLE001
                pass

    faults = {}  # candidate -> Ray faults it met so far (one retry each, whatever the phase)
    compiled = set()  # candidates whose compile succeeded once (each steps the compile bar once)

    def lost(phase, i, attempt, art, e):
        what = type(e).__name__
        if phase == "compile":
            drop(art)
            art = None
        faults[i] = faults.get(i, 0) + 1
        if faults[i] == 1:
            # A lost artefact (the node that compiled it is gone) is compiled again; a lost worker is replaced.
            again = "compile" if phase == "compile" or isinstance(e, ray.exceptions.ObjectLostError) else "bench"
            tuner._log(f"the Ray worker {'compiling' if phase == 'compile' else 'timing'} config {results[i].config} "
                       f"was lost ({what}); retrying it once")
            submit(again, i, faults[i], None if again == "compile" else art)
            return
        r = results[i]
        r.status = "worker_lost"
        r.reason = (f"the Ray worker {'compiling' if phase == 'compile' else 'benchmarking'} it was lost twice "
                    f"({what}: {str(e).strip().splitlines()[0] if str(e).strip() else ''})")
        (bars[0] if phase == "compile" and i not in compiled else bars[1]).step("lost")

    queue = list(reversed(indices))
    last_poll = 0.0
    while inflight or queue:
        compiling = sum(p == "compile" for p, _, _, _ in inflight.values())
        while queue and (max_compiles is None or compiling < max_compiles):
            submit("compile", queue.pop(), 0)
            compiling += 1
        ready, _ = ray.wait(list(inflight), num_returns=len(inflight), timeout=0.1)
        for ref in ready:
            phase, i, attempt, art = inflight.pop(ref)
            r = results[i]
            try:
                out = ray.get(ref)
            except Exception as e:  # noqa: BLE001
                if _is_fault(ray, e):
                    lost(phase, i, attempt, art, e)
                else:
                    r.status = "compile_error" if phase == "compile" else "run_error"
                    r.reason = f"the Ray task failed: {type(e).__name__}: {str(e).strip()[:2000]}"
                    (bars[0] if phase == "compile" else bars[1]).step("failed")
                continue
            if phase == "compile":
                reason, secs, where = out
                r.compile_s, r.worker = secs, where
                recompiled = i in compiled  # again, after its artefact was lost with its node
                if reason is None:
                    if not recompiled:
                        compiled.add(i)
                        bars[1].grow()
                    submit("bench", i, attempt, art)
                else:
                    r.status = "timeout" if "timed out" in reason else "compile_error"
                    r.reason = reason
                (bars[1] if recompiled else bars[0]).step("failed" if reason else "")
            else:
                status, latency, reason, where, from_bytes = out
                r.status, r.latency, r.reason = status, latency, reason
                r.bench_worker, r.loaded_from_bytes = where, from_bytes
                if r.ok and (best[0] is None or r.latency < results[best[0]].latency or
                             (r.latency == results[best[0]].latency and i < best[0])):
                    best[:] = [i, art]  # ties go to the lower index, as min() over the results does
                bars[1].step(f"{latency:.3f} ms" if r.ok else status)
            if not r.ok and r.status != "pending":
                tuner._log(f"skipped config {r.config}: {r.reason}")
        if clock is not None and time.time() - last_poll > 0.25:
            last_poll = time.time()
            keys = [(p, i, a) for p, i, a, _ in inflight.values() if p == "compile"]
            over = set(ray.get(clock.running_over.remote(timeout, keys))) if keys else set()
            for ref, (phase, i, attempt, art) in list(inflight.items()):
                if phase == "compile" and (phase, i, attempt) in over:
                    del inflight[ref]
                    ray.cancel(ref, force=True)  # kills the worker process: its compiler stops too
                    drop(ref)
                    drop(art)
                    results[i].status = "timeout"
                    results[i].reason = f"compilation timed out (over {timeout} s)"
                    (bars[1] if i in compiled else bars[0]).step("timeout")
                    tuner._log(f"skipped config {results[i].config}: {results[i].reason}")
    if clock is not None:
        ray.kill(clock)
    return best[0], best[1], blob, job_id


def fetch_reference_latency(job_id, blob, config, art, bench_resources):
    import ray

    try:
        return ray.get(ray.remote(ref_task).options(max_retries=1, **bench_resources).remote(job_id, blob, config, art))
    except Exception:  # noqa: BLE001 -- informative only
        return None
