"""@tilelang.autotune: pick the fastest configuration of a @tilelang.jit factory.

    @tilelang.autotune(configs=[{"block_M": 64, "block_N": 64}, ...], warmup=5, rep=20, ref_prog=ref)
    @tilelang.jit(out_idx=[-1], target="cpu")
    def matmul(M, N, K, block_M=128, block_N=128): ...

    result = matmul(1024, 1024, 1024)   # an AutotuneResult; call it like the best kernel
    result.config, result.latency, result.kernel, result.results

Per call arguments: the candidates compile in parallel worker processes (into the kernel disk cache);
those that fail to compile are skipped with their reason; each one left is checked against ref_prog (when
given) and timed with the profiler; the best configuration is kept in memory and on disk (under
TILELANG_CACHE_DIR/autotune/, keyed by the factory's source and qualified name, the call's arguments, the
target and the configuration list), so a later process reuses it without tuning again.

executor="ray" (or TILELANG_AUTOTUNE_EXECUTOR=ray) does the compiling and timing on a Ray cluster instead,
after pruning in this process what lowering alone rejects; see ray_executor.py and docs/tools.md.
"""
import hashlib
import inspect
import json
import logging
import os
import sys
import tempfile

from .. import _ffi
from .._version import __version__
from ..errors import TileLangArgumentError, TileLangTypeError, TileLangUnsupportedError
from ..log import logger
from . import compile_pool
from .capture import get_autotune_inputs
from .measure import measure_kernel


class CandidateResult:
    """One configuration's outcome: status "ok", "compile_error", "wrong", "run_error", "timeout" or (executor
    "ray") "worker_lost". ``pruned``: rejected in the driver by lowering alone (executor "ray"); ``worker`` and
    ``bench_worker``: where it compiled and was timed ("host:pid"); ``loaded_from_bytes``: the timing worker
    loaded the artefact the compile worker sent, without compiling."""

    __slots__ = ("index", "config", "status", "latency", "reason", "compile_s", "pruned", "worker", "bench_worker",
                 "loaded_from_bytes")

    def __init__(self, index, config, status="pending", latency=None, reason=None, compile_s=None):
        self.index, self.config, self.status = index, config, status
        self.latency, self.reason, self.compile_s = latency, reason, compile_s
        self.pruned, self.worker, self.bench_worker, self.loaded_from_bytes = False, None, None, None

    @property
    def ok(self):
        return self.status == "ok"

    def to_json(self):
        return {"index": self.index, "config": repr(self.config), "status": self.status, "latency": self.latency,
                "reason": self.reason, "compile_s": self.compile_s, "pruned": self.pruned}

    def __repr__(self):
        what = f"{self.latency:.4f} ms" if self.ok else f"{self.status}: {self.reason}"
        return f"CandidateResult({self.config}, {what})"


from ..jit.kernel import JITKernel  # noqa: E402


class AutotuneResult(JITKernel):
    """The outcome of tuning: ``config``, ``latency`` (ms), ``kernel`` (the best JITKernel), ``ref_latency``
    (the reference program's time, when given), ``results`` (every CandidateResult), ``from_cache``
    (loaded from the disk cache without tuning), ``cache_path``. It is the best kernel, as TileLang's autotuned
    functions return it (a JITKernel: isinstance and every method); calling it calls the kernel."""

    def __init__(self, config, latency, kernel, results, ref_latency=None, from_cache=False, cache_path=None):
        if isinstance(kernel, JITKernel):
            self.__dict__.update(kernel.__dict__)  # the best kernel's state: JITKernel's methods run on it
        self.config, self.latency, self.kernel, self.results = config, latency, kernel, results
        self.ref_latency, self._tuned_from_cache, self.cache_path = ref_latency, from_cache, cache_path
        self.executor = None  # "local" or "ray" when tuned in this process
        self.pruned = sum(bool(getattr(r, "pruned", False)) for r in results)  # rejected by lowering alone

    @property
    def from_cache(self):
        """Whether the tuning result came from the autotuner's disk cache (the kernel's own build cache is
        ``kernel.from_cache``)."""
        return self._tuned_from_cache

    @property
    def skipped(self):
        return [r for r in self.results if not r.ok]

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def __getattr__(self, name):
        if name == "kernel":  # not set yet (unpickling)
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self):
        if self.latency is None:
            return f"AutotuneResult(config={self.config}, given explicitly: not tuned)"
        return (f"AutotuneResult(config={self.config}, latency={self.latency:.4f} ms, {len(self.results)} candidates, "
                f"{len(self.skipped)} skipped{', from cache' if self.from_cache else ''})")


def _keyed(x):
    """Call arguments as a key: a tensor (an eager kernel's argument) stands for its shape and dtype."""
    if isinstance(x, dict):
        return {k: _keyed(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_keyed(v) for v in x)
    if hasattr(x, "shape") and hasattr(x, "dtype") and getattr(x, "ndim", 0) > 0:
        return ("tensor", tuple(int(d) for d in x.shape), str(x.dtype))
    return x


def _freeze(x):
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in x.items()))
    return x


def _cache_root():
    return os.path.join(_ffi.cache_policy()[1], "autotune")  # the disk cache's one policy (C++)


def _cache_disabled():
    return not _ffi.cache_policy()[0]


def _factory_identity(factory):
    try:
        source = inspect.getsource(factory)
    except (OSError, TypeError):
        code = getattr(factory, "__code__", None)
        source = repr((code.co_code, code.co_consts)) if code is not None else repr(factory)
    name = f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"
    return hashlib.sha256(source.encode()).hexdigest(), name


def _jsonable(x):
    try:
        json.dumps(x)
        return x
    except (TypeError, ValueError):
        return repr(x)


class _Progress:
    """tqdm when installed, else one line per step."""

    def __init__(self, total, desc, enabled):
        self.bar, self.n, self.total, self.desc, self.enabled = None, 0, total, desc, enabled
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, leave=False, file=sys.stderr)
            except ImportError:
                pass

    def grow(self, n=1):
        self.total += n
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def step(self, note=""):
        self.n += 1
        if self.bar is not None:
            if note:
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(1)
        elif self.enabled:
            logger.info("autotune %s: %d/%d %s", self.desc, self.n, self.total, note)

    def close(self):
        if self.bar is not None:
            self.bar.close()


EXECUTORS = ("local", "ray")


def _check_executor(value, what):
    if value not in EXECUTORS:
        raise TileLangArgumentError(f"{what}{value!r}: the autotuner's executors are 'local' (worker processes on "
                                    "this machine) and 'ray' (a Ray cluster; pip install 'tilelang-cpp[ray]')")


def _describe_cluster(ray):
    res = ray.cluster_resources()
    gpus = f", {int(res['GPU'])} GPUs" if res.get("GPU") else ""
    return f"{len([n for n in ray.nodes() if n.get('Alive')])} node(s), {int(res.get('CPU', 0))} CPUs{gpus}"


class AutoTuner:
    """The tuning state of one decorated factory (use through @tilelang.autotune)."""

    def __init__(self, jitted, configs, warmup=25, rep=100, timeout=None, ref_prog=None, supply_type=None,
                 atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.0, skip_check=False, cache_input_tensors=True,
                 shapes=None, dynamic_values=None, max_workers=None, use_cache=True, verbose=True,
                 return_mode="median", executor=None, supply_prog=None, manual_check_prog=None,
                 do_not_specialize=None, early_stop=False, early_stop_factor=2.0):
        if not callable(jitted) or not hasattr(jitted, "jit_options"):
            raise TileLangTypeError("@tilelang.autotune goes above @tilelang.jit: it tunes a jit factory, got "
                                    f"{getattr(jitted, '__name__', type(jitted).__name__)}")
        if configs is None:
            raise TileLangArgumentError("@tilelang.autotune needs configs=[{...}, ...] or a function returning them")
        self.jitted = jitted
        self.factory = getattr(jitted, "__wrapped__", jitted)
        self.configs = configs
        self.warmup, self.rep, self.timeout = warmup, rep, timeout
        self.ref_prog, self.supply_type, self.skip_check = ref_prog, supply_type, skip_check
        self.atol, self.rtol, self.max_mismatched_ratio = atol, rtol, max_mismatched_ratio
        self.cache_input_tensors = cache_input_tensors
        self.shapes, self.dynamic_values = shapes, dynamic_values
        self.max_workers = max_workers
        self.use_cache, self.verbose, self.return_mode = use_cache, verbose, return_mode
        if executor is not None:
            _check_executor(executor, "executor=")
            if executor == "ray":
                from . import ray_executor

                ray_executor.require_ray()  # a missing extra is said at decoration time
        self.executor = executor  # None: $TILELANG_AUTOTUNE_EXECUTOR, else "local"
        for name, f in (("supply_prog", supply_prog), ("manual_check_prog", manual_check_prog)):
            if f is not None and not callable(f):
                raise TileLangTypeError(f"{name}= takes a function, got {f!r}")
        self.supply_prog, self.manual_check_prog = supply_prog, manual_check_prog
        if isinstance(do_not_specialize, str):
            do_not_specialize = (do_not_specialize,)
        self.do_not_specialize = tuple(do_not_specialize or ())
        unknown = [n for n in self.do_not_specialize if n not in _parameter_names(self.factory)]
        if unknown:
            raise TileLangArgumentError(f"do_not_specialize names {', '.join(map(repr, unknown))}, which "
                                        f"'{self.factory.__name__}' has no parameter of")
        if early_stop and float(early_stop_factor) < 1.0:
            raise TileLangArgumentError(f"early_stop_factor must be >= 1.0, got {early_stop_factor}")
        self.early_stop, self.early_stop_factor = bool(early_stop), float(early_stop_factor)
        self.memory = {}  # call key -> AutotuneResult

    # ---- the call -------------------------------------------------------------------------------
    def _call_key(self, args, kwargs):
        """What a tuning is kept under: the call's arguments, less those named in do_not_specialize (a
        later call differing only in them reuses the tuned configuration, built for its own values)."""
        if not self.do_not_specialize:
            return (_freeze(_keyed(args)), _freeze(_keyed(kwargs)))
        bound = inspect.signature(self.factory).bind_partial(*args, **kwargs).arguments
        kept = {k: v for k, v in bound.items() if k not in self.do_not_specialize}
        return ((), _freeze(_keyed(kept)))

    @classmethod
    def from_kernel(cls, kernel, configs):
        """TileLang's explicit tuner: ``AutoTuner.from_kernel(kernel=f, configs=[...])`` then
        ``.set_compile_args(...)``, ``.set_profile_args(...)``, ``.run(...)`` (see _TunerBuilder)."""
        return _TunerBuilder(kernel, configs)

    def __call__(self, *args, **kwargs):
        key = self._call_key(args, kwargs)
        full = (_freeze(_keyed(args)), _freeze(_keyed(kwargs)))
        hit = self.memory.get(key)
        if hit is not None and self.do_not_specialize and getattr(hit, "call", full) != full and not self._eager:
            # the tuned configuration, built for this call's values of the unspecialised parameters
            config = {} if getattr(hit, "explicit", False) else hit.config
            result = AutotuneResult(hit.config, hit.latency, self._build(args, kwargs, config), hit.results,
                                    hit.ref_latency, hit.from_cache, hit.cache_path)
            result.call = full
            return result
        if key not in self.memory:
            explicit = self._explicit_config(args, kwargs)
            if explicit is not None:
                # Every tunable parameter is given in the call (as TileLang allows): no tuning, that config.
                self._log(f"every tuned parameter of {self.factory.__name__} is given ({explicit}); not tuning")
                result = AutotuneResult(explicit, None, self._build(args, kwargs, {}), [])
                result.explicit = True
                self.memory[key] = result
            else:
                self.memory[key] = self.tune(*args, **kwargs)
            self.memory[key].call = full
        result = self.memory[key]
        if self._eager:
            # An eager kernel's call runs it: with the chosen configuration, on the call's tensors.
            return self.jitted(*args, **kwargs, **({} if getattr(result, "explicit", False) else result.config))
        return result

    @property
    def _eager(self):
        return getattr(self.jitted, "is_eager", False)

    def _build(self, args, kwargs, config):
        """The kernel for one configuration: a factory's call, or an eager function's compile(). A
        configuration's "pass_configs" entry (as in TileLang) is not a factory argument: it is added to the
        compile's pass configs for that candidate."""
        config = dict(config)
        extra = config.pop("pass_configs", None)
        if extra is not None and not isinstance(extra, dict):
            raise TileLangTypeError(f"an autotune configuration's 'pass_configs' is a dict, got {extra!r}")
        if self._eager:
            if extra:
                raise TileLangUnsupportedError("a 'pass_configs' entry in the configurations of an eager kernel: "
                                               "give them with T.annotate_pass_configs in its body")
            return self.jitted.compile(*args, **kwargs, **config)
        if not extra:
            return self.jitted(*args, **kwargs, **config)
        from ..jit import compile as _compile

        opts = self.jitted.jit_options
        merged = {**(opts.get("pass_configs") or {}), **extra}
        prim = self.factory(*args, **kwargs, **config)
        return _compile(prim, out_idx=opts.get("out_idx"), target=opts.get("target"),
                        execution_backend=opts.get("execution_backend"), pass_configs=merged)

    def _explicit_config(self, args, kwargs):
        """The call's values of the tuned parameters when it gives all of them, else None."""
        if callable(self.configs):
            return None
        tuned = {k for c in self.configs if isinstance(c, dict) for k in c}
        if not tuned:
            return None
        try:
            bound = inspect.signature(self.factory).bind_partial(*args, **kwargs).arguments
        except (TypeError, ValueError):
            bound = dict(kwargs)
        if not tuned <= set(bound):
            return None
        return {k: bound[k] for k in sorted(tuned)}

    def _config_list(self, args, kwargs):
        configs = self.configs
        if callable(configs):
            try:
                inspect.signature(configs).bind(*args, **kwargs)
                configs = configs(*args, **kwargs)
            except TypeError:
                configs = configs()
        configs = list(configs)
        if not configs:
            raise TileLangArgumentError("@tilelang.autotune got an empty list of configurations")
        for c in configs:
            if not isinstance(c, dict):
                raise TileLangTypeError(f"an autotune configuration is a dict of the factory's keyword arguments, "
                                        f"got {c!r}")
        try:
            bound = set(inspect.signature(self.factory).bind_partial(*args, **kwargs).arguments)
        except (TypeError, ValueError):
            bound = set(kwargs)
        clash = sorted(bound & {k for c in configs for k in c})
        if clash:
            raise TileLangArgumentError(f"argument(s) {', '.join(clash)} of '{self.factory.__name__}' are both passed "
                                        "in the call and tuned by the configurations; pass only the fixed ones, or "
                                        "every tuned one (then that configuration is used without tuning)")
        return configs

    def _cache_path(self, args, kwargs, configs):
        src_hash, name = _factory_identity(self.factory)
        opts = self.jitted.jit_options
        from ..jit.target import default_target

        text = repr((__version__, src_hash, name, self._call_key(args, kwargs), str(default_target(opts.get("target"))),
                     repr(opts.get("out_idx")), repr(opts.get("pass_configs")), [repr(c) for c in configs],
                     self.return_mode))
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        return os.path.join(_cache_root(), f"{name.rsplit('.', 1)[-1]}_{digest}.json")

    def _log(self, msg):
        """verbose=True: at INFO; otherwise at DEBUG (TL_LOG_LEVEL=DEBUG shows them)."""
        logger.log(logging.INFO if self.verbose else logging.DEBUG, "autotune: %s", msg)

    # ---- tuning ---------------------------------------------------------------------------------
    def tune(self, *args, **kwargs):
        configs = self._config_list(args, kwargs)
        name = self.factory.__name__
        caching = self.use_cache and not _cache_disabled()
        path = self._cache_path(args, kwargs, configs) if caching else None
        if path is not None:
            hit = self._load(path, configs, args, kwargs)
            if hit is not None:
                return hit

        results = [CandidateResult(i, c) for i, c in enumerate(configs)]

        def build(i):
            return self._build(args, kwargs, configs[i])

        executor = self._executor()
        if executor == "ray" and get_autotune_inputs() is not None:
            raise TileLangUnsupportedError("set_autotune_inputs with executor='ray': the candidates are timed on the "
                                           "cluster's workers, which the given tensors are not shipped to; tune "
                                           "with executor='local' or without set_autotune_inputs")
        if executor == "ray":
            best_kernel, ref_latency = self._run_ray(args, kwargs, results)
        else:
            best_kernel, ref_latency = self._run_local(build, results, caching)

        good = [r for r in results if r.ok]
        best = min(good, key=lambda r: r.latency)
        kernel = best_kernel(best)
        n_pruned = sum(r.pruned for r in results)
        pruned = f", {n_pruned} pruned statically" if n_pruned else ""
        self._log(f"best config for {name}{args}: {best.config} at {best.latency:.4f} ms "
                  f"({len(good)} of {len(results)} candidates valid{pruned}; executor {executor})")
        result = AutotuneResult(best.config, best.latency, kernel, results, ref_latency(best, kernel), False, path)
        result.executor = executor
        if path is not None:
            self._store(path, result)
        return result

    def _executor(self):
        if self.executor is not None:
            return self.executor
        env = os.environ.get("TILELANG_AUTOTUNE_EXECUTOR", "") or "local"
        _check_executor(env, "TILELANG_AUTOTUNE_EXECUTOR=")
        return env

    def _no_valid(self, results):
        lines = "\n".join(f"  {r.config}: {r.reason}" for r in results)
        raise TileLangArgumentError(
            f"autotuning '{self.factory.__name__}': no configuration compiled and passed its checks:\n{lines}")

    def _run_local(self, build, results, caching):
        """Compiles in forked worker processes, then loads, checks and times each candidate here.
        Returns (best kernel of a result, reference latency of (result, kernel))."""
        configs = [r.config for r in results]
        name = self.factory.__name__
        # 1. compile every candidate, in parallel worker processes when the disk cache can carry the result
        workers = self.max_workers or min(len(configs), os.cpu_count() or 1)
        if not caching or _compiles_in_process(self.jitted.jit_options.get("target")):
            workers = 1
        bar = _Progress(len(configs), f"compiling {name}", self.verbose)

        def done(i, reason):
            bar.step("failed" if reason else "")

        outcome = compile_pool.compile_all(build, list(range(len(configs))), workers, self.timeout, done)
        bar.close()
        for i, (reason, secs) in outcome.items():
            results[i].compile_s = secs
            if reason is not None:
                results[i].status = "timeout" if "timed out" in reason else "compile_error"
                results[i].reason = reason
                self._log(f"skipped config {configs[i]}: {reason}")

        # 2. load, check and time the ones that compiled
        inputs_box = [None]  # the inputs shared by the candidates (cache_input_tensors)
        live = [r for r in results if r.status == "pending"]
        bar = _Progress(len(live), f"benchmarking {name}", self.verbose)
        best = None  # the best latency so far (early_stop)
        for r in live:
            try:
                kernel = build(r.index)  # from the disk cache the worker filled
            except Exception as e:  # noqa: BLE001
                r.status, r.reason = "compile_error", compile_pool.describe_error(e)
            else:
                r.status, r.latency, r.reason = measure_kernel(kernel, self._measure_options(), inputs_box,
                                                               best if self.early_stop else None)
                if r.ok:
                    best = r.latency if best is None else min(best, r.latency)
            bar.step(f"{r.latency:.3f} ms" if r.ok else r.status)
            if not r.ok:
                self._log(f"skipped config {r.config}: {r.reason}")
        bar.close()
        if not any(r.ok for r in results):
            self._no_valid(results)

        def ref_latency(best, kernel):
            inputs = inputs_box[0]
            if self.ref_prog is None or inputs is None:
                return None
            try:
                return kernel.get_profiler(**self._profiler_kw()).do_bench(
                    lambda: self.ref_prog(*inputs), warmup=self.warmup, rep=self.rep)
            except Exception:  # noqa: BLE001 -- the reference's time is informative only
                return None

        return (lambda best: build(best.index)), ref_latency

    def _run_ray(self, args, kwargs, results):
        """Prunes statically here, then compiles and benchmarks on the Ray cluster (ray_executor.py)."""
        from .. import _ffi
        from . import artefacts, ray_executor, static_check

        ray = ray_executor.require_ray()
        if any(isinstance(c, dict) and "pass_configs" in c for c in self._config_list(args, kwargs)):
            raise TileLangUnsupportedError("a 'pass_configs' entry in the configurations with executor='ray': use "
                                           "executor='local'")
        if self.early_stop:
            raise TileLangUnsupportedError("early_stop=True with executor='ray': the cluster times candidates in "
                                           "parallel, with no running best to stop against; use executor='local'")
        if self._eager:
            raise TileLangUnsupportedError(f"executor='ray' tunes @tilelang.jit factories (functions returning a "
                                           f"@T.prim_func); '{self.factory.__name__}' is an eager kernel: use "
                                           "executor='local'")
        name = self.factory.__name__
        ray_executor.connect(ray, self._log)
        jit_options, bench_resources = ray_executor.resolve_target(ray, self.jitted.jit_options, self._log)

        # 1. static pruning, in the driver: the factory and the lowering passes only, no toolchain
        for r in results:
            try:
                func = self.factory(*args, **kwargs, **r.config)
                if isinstance(func, _ffi.PrimFunc):  # anything else: the workers report what compile() says
                    static_check.lowering_check(func, jit_options, self.factory)
            except Exception as e:  # noqa: BLE001
                r.status, r.reason, r.pruned = "compile_error", compile_pool.describe_error(e), True
                self._log(f"skipped config {r.config}: {r.reason}")
        live = [r.index for r in results if not r.pruned]
        self._log(f"pruned {len(results) - len(live)} of {len(results)} configurations statically (lowering only); "
                  f"sending {len(live)} to the Ray cluster ({_describe_cluster(ray)})")

        # 2. compile on CPU workers, benchmark on device workers, pipelined
        job = {"factory": self.factory, "args": args, "kwargs": kwargs, "jit": jit_options,
               "measure": self._measure_options(), "cache_dirs": dict(ray_executor.TEST_CACHE_DIRS)}
        bars = (_Progress(len(live), f"compiling {name} (ray)", self.verbose),
                _Progress(0, f"benchmarking {name} (ray)", self.verbose))
        try:
            best_index, best_art, blob, job_id = ray_executor.run(self, job, results, live, {"num_cpus": 1},
                                                                  bench_resources, self.timeout, bars,
                                                                  self.max_workers)
        finally:
            for b in bars:
                b.close()
        if not any(r.ok for r in results):
            self._no_valid(results)

        def best_kernel(best):
            # the best candidate's compiled entry comes back as bytes: loaded here without compiling
            assert best.index == best_index, "the Ray executor and the tuner disagree on the best candidate"
            art = ray.get(best_art)
            if art is not None and artefacts.cache_enabled():
                artefacts.unpack(art)
            return ray_executor.build(job, best.config)  # with the target the workers compiled for

        def ref_latency(best, kernel):
            return ray_executor.fetch_reference_latency(job_id, blob, best.config, best_art, bench_resources)

        return best_kernel, ref_latency

    def _profiler_kw(self):
        return {"tensor_supply_type": self.supply_type, "shapes": self.shapes, "dynamic_values": self.dynamic_values}

    def _measure_options(self):
        return {"ref_prog": self.ref_prog, "skip_check": self.skip_check, "atol": self.atol, "rtol": self.rtol,
                "max_mismatched_ratio": self.max_mismatched_ratio, "cache_input_tensors": self.cache_input_tensors,
                "profiler_kw": self._profiler_kw(), "timeout": self.timeout, "warmup": self.warmup, "rep": self.rep,
                "return_mode": self.return_mode, "inputs": get_autotune_inputs(), "supply_prog": self.supply_prog,
                "manual_check_prog": self.manual_check_prog,
                "early_stop_factor": self.early_stop_factor if self.early_stop else None,
                "bench_backend": getattr(self, "bench_backend", "auto")}

    # ---- the disk cache -------------------------------------------------------------------------
    def _store(self, path, result):
        data = {"factory": _factory_identity(self.factory)[1], "best_index": next(
                    r.index for r in result.results if r.config is result.config),
                "best_config": {str(k): _jsonable(v) for k, v in result.config.items()},
                "best_config_repr": repr(result.config), "latency": result.latency,
                "ref_latency": result.ref_latency, "results": [r.to_json() for r in result.results]}
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1)
            os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
        except OSError as e:
            self._log(f"could not write the tuning cache {path}: {e}")

    def _load(self, path, configs, args, kwargs):
        try:
            with open(path) as f:
                data = json.load(f)
            i = int(data["best_index"])
            if not 0 <= i < len(configs) or repr(configs[i]) != data["best_config_repr"]:
                return None
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: tune again
        try:
            kernel = self._build(args, kwargs, configs[i])
        except Exception as e:  # noqa: BLE001
            self._log(f"the cached best config {configs[i]} no longer compiles ({e}); tuning again")
            return None
        results = []
        for j, rj in enumerate(data.get("results", [])):
            cfg = configs[j] if j < len(configs) else rj.get("config")
            results.append(CandidateResult(j, cfg, rj.get("status"), rj.get("latency"), rj.get("reason"),
                                           rj.get("compile_s")))
            results[-1].pruned = bool(rj.get("pruned"))
        self._log(f"using the cached best config for {self.factory.__name__}: {configs[i]} "
                  f"({data['latency']:.4f} ms when tuned)")
        return AutotuneResult(configs[i], float(data["latency"]), kernel, results, data.get("ref_latency"), True, path)


class _TunerBuilder:
    """TileLang's explicit tuner: ``AutoTuner.from_kernel(kernel=f, configs=[...]).set_compile_args(...)
    .set_profile_args(...).run(...)``, where ``f(**config)`` returns a @T.prim_func. run() tunes with the
    same machinery as @tilelang.autotune and returns an AutotuneResult."""

    def __init__(self, kernel, configs):
        if not callable(kernel):
            raise TileLangTypeError(f"AutoTuner.from_kernel(kernel=...) takes a function returning a @T.prim_func "
                                    f"for a configuration, got {kernel!r}")
        self.kernel, self.configs = kernel, configs
        self.compile_args = {"out_idx": None, "target": None, "execution_backend": None, "pass_configs": None,
                             "verbose": None}
        self.profile_args = {}

    def set_compile_args(self, out_idx=None, target=None, execution_backend=None, target_host=None, verbose=None,
                         pass_configs=None):
        """As TileLang: target and execution_backend default to $TILELANG_DEFAULT_TARGET /
        $TILELANG_EXECUTION_BACKEND, else "auto"."""
        if target_host is not None:
            from ..log import warn

            warn(f"set_compile_args(target_host={target_host!r}) has no effect: this compiler builds the host side "
                 "of every target itself")
        self.compile_args = {
            "out_idx": out_idx,
            "target": target if target is not None else os.environ.get("TILELANG_DEFAULT_TARGET", "auto"),
            "execution_backend": execution_backend if execution_backend is not None
            else (os.environ.get("TILELANG_EXECUTION_BACKEND") or None),
            "pass_configs": pass_configs,
            "verbose": bool(verbose) if verbose is not None else os.environ.get("TILELANG_VERBOSE", "0") in ("1", "true"),
        }
        if self.compile_args["execution_backend"] == "auto":
            self.compile_args["execution_backend"] = None
        return self

    def set_profile_args(self, warmup=25, rep=100, timeout=30, supply_type=None, ref_prog=None, supply_prog=None,
                         rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01, skip_check=False, manual_check_prog=None,
                         cache_input_tensors=False, backend="event"):
        self.profile_args = {"warmup": warmup, "rep": rep, "timeout": timeout, "supply_type": supply_type,
                             "ref_prog": ref_prog, "supply_prog": supply_prog, "rtol": rtol, "atol": atol,
                             "max_mismatched_ratio": max_mismatched_ratio, "skip_check": skip_check,
                             "manual_check_prog": manual_check_prog, "cache_input_tensors": cache_input_tensors,
                             "bench_backend": backend}
        return self

    def run(self, warmup=25, rep=100, timeout=180, use_pipeline=False, enable_grouped_compile=False,
            group_compile_size=2, benchmark_devices=None, benchmark_multi_gpu=False, early_stop=False,
            early_stop_factor=2.0):
        """Tunes and returns the AutotuneResult (.config, .latency, .kernel, .ref_latency, .results).
        use_pipeline / enable_grouped_compile / group_compile_size schedule TileLang's compiles; here the
        candidates always compile in parallel worker processes, so they change nothing (said at INFO).
        benchmark_multi_gpu is not supported (a TileLangUnsupportedError)."""
        from ..jit import jit

        if benchmark_multi_gpu or benchmark_devices:
            raise TileLangUnsupportedError("AutoTuner.run(benchmark_multi_gpu=True / benchmark_devices=...): "
                                           "timing on several GPUs is not supported; candidates are timed one "
                                           "after another on one device")
        if use_pipeline or enable_grouped_compile or group_compile_size != 2:
            from ..log import warn

            warn("AutoTuner.run(use_pipeline= / enable_grouped_compile= / group_compile_size=) has no effect in "
                 "TileLang-C++: candidates always compile in parallel worker processes")
        ca, pa = self.compile_args, dict(self.profile_args)
        jitted = jit(out_idx=ca["out_idx"], target=ca["target"] or "auto", execution_backend=ca["execution_backend"],
                     pass_configs=ca["pass_configs"])(self.kernel)
        bench_backend = pa.pop("bench_backend", "event")
        pa.pop("warmup", None), pa.pop("rep", None)
        profile_timeout = pa.pop("timeout", None)
        tuner = AutoTuner(jitted, self.configs, warmup=warmup, rep=rep, timeout=timeout or profile_timeout,
                          verbose=True, early_stop=early_stop,
                          early_stop_factor=early_stop_factor, **pa)
        tuner.bench_backend = bench_backend
        return tuner.tune()


def autotune(func=None, *, configs=None, warmup=25, rep=100, timeout=None, ref_prog=None, supply_type=None,
             atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.0, skip_check=False, cache_input_tensors=True,
             shapes=None, dynamic_values=None, max_workers=None, use_cache=True, verbose=True, return_mode="median",
             executor=None, supply_prog=None, manual_check_prog=None, do_not_specialize=None, early_stop=False,
             early_stop_factor=2.0):
    """Decorator above @tilelang.jit. ``configs``: a list of dicts of the factory's keyword arguments, or a
    function returning one (called with the call's arguments when it accepts them). ``warmup`` / ``rep``:
    the profiler's time budgets (ms). ``timeout``: seconds allowed to compile (and to run once) a candidate.
    ``ref_prog``: a NumPy reference; candidates whose outputs differ beyond atol/rtol are skipped.
    ``cache_input_tensors``: reuse one set of inputs for every candidate. ``max_workers``: compile processes
    (default: one per CPU; with executor "ray": compile tasks in flight at once, default all). ``use_cache``:
    read and write the disk cache of best configurations.
    ``return_mode``: the statistic compared ("median"; "min" resists a loaded machine's noise better).
    ``executor``: "local" (forked compile processes, then timing in this process) or "ray" (static pruning
    here, then compiling and timing on a Ray cluster; see docs/tools.md); default $TILELANG_AUTOTUNE_EXECUTOR,
    else "local".
    ``supply_prog``: f(input_specs) -> the input tensors (instead of the profiler's random ones);
    ``manual_check_prog``: f(outputs, ref_outputs), raising to reject a candidate (instead of atol/rtol);
    ``do_not_specialize``: parameter names left out of the tuning key (tuned once, built per value);
    ``early_stop`` / ``early_stop_factor``: a candidate whose quick estimate is over factor x the best so far
    is not timed in full (status "early_stopped").
    Calling the decorated factory returns an AutotuneResult, which calls like the best kernel."""

    def decorate(jitted):
        tuner = AutoTuner(jitted, configs, warmup, rep, timeout, ref_prog, supply_type, atol, rtol,
                          max_mismatched_ratio, skip_check, cache_input_tensors, shapes, dynamic_values, max_workers,
                          use_cache, verbose, return_mode, executor, supply_prog, manual_check_prog,
                          do_not_specialize, early_stop, early_stop_factor)

        def wrapper(*args, **kwargs):
            return tuner(*args, **kwargs)

        def compile(*args, **kwargs):  # noqa: A001 -- TileLang's name
            """The kernel for these arguments: tuned first unless every tuned parameter is given."""
            if tuner._eager:
                explicit = tuner._explicit_config(args, kwargs)
                if explicit is None:
                    best = tuner.tune(*args, **kwargs).config
                    return jitted.compile(*args, **kwargs, **best)
                return jitted.compile(*args, **kwargs)
            return tuner(*args, **kwargs).kernel

        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(wrapper, attr, getattr(tuner.factory, attr, None))
        wrapper.__wrapped__ = jitted
        wrapper.tuner = tuner
        wrapper.compile = compile
        return wrapper

    return decorate(func) if func is not None else decorate


def _parameter_names(factory):
    try:
        return set(inspect.signature(factory).parameters)
    except (TypeError, ValueError):
        return set()


def _compiles_in_process(target):
    """A backend whose toolchain does not survive a fork (OpenCL: the runtime's driver threads) compiles
    its candidates in this process (the registry's fork_safe trait)."""
    try:
        from ..jit.target import default_target, normalize

        return not _ffi.backend_info(normalize(default_target(target))[0])[4]
    except Exception:  # noqa: BLE001 - a bad target is reported by the compile itself
        return False
