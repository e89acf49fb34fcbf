"""Compiling autotuning candidates in parallel worker processes.

Workers are forked, so the decorated factory (often a closure, or a module attribute shadowed by its
decorators) needs no pickling: the parent puts the job in _JOB before starting the pool and submits only
indices. A worker compiles its candidate into the kernel disk cache and returns only whether that worked
and why not; the parent then loads each built library from the cache quickly.

Timeouts are per candidate, from the moment a worker starts it (a start time in shared memory); a
candidate over its time has its pool killed, and the candidates not finished yet go on in a fresh pool.
A worker that dies (a crash in the compiler) breaks the pool: when only one candidate was running it is
the culprit, else the unfinished candidates are rerun one at a time, which names it.
"""
import concurrent.futures as cf
import multiprocessing
import time
from concurrent.futures.process import BrokenProcessPool

_JOB = None  # (compile_fn(i) -> None or raises, shared start times by i) set by the parent before forking


def describe_error(e):
    from ..errors import TileLangError, TileLangInternalError

    kind = type(e).__name__
    if isinstance(e, TileLangInternalError):
        kind += " (compiler bug)"
    elif not isinstance(e, TileLangError):
        kind += " (raised by the factory)"
    return f"{kind}: {str(e).strip()}"


def _run_one(i):
    compile_fn, started = _JOB
    started[i] = time.time()  # shared memory: the parent's clock for this candidate's timeout
    t0 = time.perf_counter()
    try:
        compile_fn(i)
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

    ctx = multiprocessing.get_context("fork")
    started = ctx.Array("d", max(indices) + 1, lock=False)
    _JOB = (compile_fn, started)
    pending = list(indices)
    try:
        while pending:
            for i in pending:
                started[i] = 0.0
            pool = cf.ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=ctx)
            futures = {pool.submit(_run_one, i): i for i in pending}
            timed_out, broken = [], False
            try:
                while futures and not timed_out and not broken:
                    done, _ = cf.wait(list(futures), timeout=0.05, return_when=cf.FIRST_COMPLETED)
                    for f in done:
                        i = futures.pop(f)
                        try:
                            finish(i, *f.result())
                        except BrokenProcessPool:
                            broken = True
                    if broken:  # the culprit started and never finished; alone, it is known for sure
                        suspects = [i for i in pending if i not in results and started[i]]
                        if len(suspects) == 1:
                            finish(suspects[0], "the compiler crashed (the worker process died)", None)
                    if timeout:
                        now = time.time()
                        timed_out = [i for i in futures.values() if started[i] and now - started[i] > timeout]
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
