"""Compiling autotuning candidates in parallel worker processes.

Workers are forked, so the decorated factory (often a closure, or a module attribute shadowed by its
decorators) needs no pickling: the parent puts the job in _JOB before starting the pool and submits only
indices. A worker compiles its candidate into the kernel disk cache and returns only whether that worked
and why not; the parent then loads each built library from the cache quickly.

Timeouts are per candidate, from the moment it is seen running; a candidate over its time has its pool
killed, and the candidates not finished yet go on in a fresh pool. A worker that dies (a crash in the
compiler) breaks the pool: the unfinished candidates are rerun one at a time, which names the culprit.
"""
import concurrent.futures as cf
import multiprocessing
import time
from concurrent.futures.process import BrokenProcessPool

_JOB = None  # (compile_fn(i) -> None or raises) set by the parent before forking


def describe_error(e):
    from ..errors import TileLangError, TileLangInternalError

    kind = type(e).__name__
    if isinstance(e, TileLangInternalError):
        kind += " (compiler bug)"
    elif not isinstance(e, TileLangError):
        kind += " (raised by the factory)"
    return f"{kind}: {str(e).strip()}"


def _run_one(i):
    t0 = time.perf_counter()
    try:
        _JOB(i)
        return None, time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 -- every failure is a reason to skip the candidate
        return describe_error(e), time.perf_counter() - t0


def fork_available():
    return "fork" in multiprocessing.get_all_start_methods()


def compile_all(compile_fn, indices, workers, timeout=None, on_done=None):
    """Runs compile_fn(i) for every i, in up to `workers` forked processes. Returns {i: (reason or None,
    seconds or None)}; on_done(i, reason) is called as each finishes."""
    global _JOB
    results = {}

    def finish(i, reason, secs):
        results[i] = (reason, secs)
        if on_done is not None:
            on_done(i, reason)

    if workers <= 1 or len(indices) <= 1 or not fork_available():
        for i in indices:
            finish(i, *_run_serial(compile_fn, i))
        return results

    _JOB = compile_fn
    ctx = multiprocessing.get_context("fork")
    pending = list(indices)
    try:
        while pending:
            pool = cf.ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=ctx)
            futures = {pool.submit(_run_one, i): i for i in pending}
            seen_running, timed_out, broken = {}, [], False
            try:
                while futures and not timed_out and not broken:
                    done, _ = cf.wait(list(futures), timeout=0.05, return_when=cf.FIRST_COMPLETED)
                    for f in done:
                        i = futures.pop(f)
                        try:
                            finish(i, *f.result())
                        except BrokenProcessPool:
                            broken = True
                            if workers == 1:  # one at a time: this candidate killed its worker
                                finish(i, "the compiler crashed (the worker process died)", None)
                    now = time.monotonic()
                    for f, i in futures.items():
                        if f.running():
                            seen_running.setdefault(i, now)
                    if timeout:
                        timed_out = [i for i, t0 in seen_running.items() if i in futures.values() and now - t0 > timeout]
            finally:
                if timed_out or broken:
                    for p in list(getattr(pool, "_processes", {}).values()):
                        p.kill()
                pool.shutdown(wait=True, cancel_futures=True)
            for i in timed_out:
                finish(i, f"compilation timed out (over {timeout} s)", None)
            if broken:
                workers = 1
            pending = [i for i in pending if i not in results]
    finally:
        _JOB = None
    return results


def _run_serial(compile_fn, i):
    t0 = time.perf_counter()
    try:
        compile_fn(i)
        return None, time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001
        return describe_error(e), time.perf_counter() - t0
