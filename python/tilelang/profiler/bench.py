"""Timing a callable: wall clock (CPU target, emulator) or CUDA events (a CUDA kernel on a GPU).

warmup and rep are time budgets in milliseconds, turned into run counts from a first estimate, as in
TileLang and Triton; n_warmup / n_repeat, when positive, fix the counts instead.
"""
import time

import numpy as np

from ..errors import TileLangArgumentError

RETURN_MODES = ("median", "mean", "min", "max", "all")


def _counts(estimate_ms, warmup, rep, n_warmup, n_repeat):
    est = max(estimate_ms, 1e-4)
    nw = int(n_warmup) if n_warmup and n_warmup > 0 else max(1, int(warmup / est))
    nr = int(n_repeat) if n_repeat and n_repeat > 0 else max(1, int(rep / est))
    return nw, min(nr, 100000)


def _summarise(times_ms, return_mode, quantiles):
    times = np.asarray(times_ms, dtype=np.float64)
    if quantiles is not None:
        out = [float(q) for q in np.quantile(times, quantiles)]
        return out[0] if len(out) == 1 else out
    if return_mode not in RETURN_MODES:
        raise TileLangArgumentError(f"return_mode '{return_mode}' is not one of {', '.join(RETURN_MODES)}")
    if return_mode == "all":
        return times.tolist()
    return float(getattr(np, return_mode)(times))


def bench_wall(fn, warmup=25, rep=100, n_warmup=0, n_repeat=0, return_mode="median", quantiles=None):
    """Times fn() with time.perf_counter, one sample per call; returns ms."""
    t0 = time.perf_counter()
    fn()  # first call: also loads whatever is loaded lazily
    first = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    fn()
    est = min(first, (time.perf_counter() - t0) * 1e3)
    nw, nr = _counts(est, warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()
    times = []
    clock = time.perf_counter
    for _ in range(nr):
        t0 = clock()
        fn()
        times.append((clock() - t0) * 1e3)
    return _summarise(times, return_mode, quantiles)


def bench_cuda_events(fn, warmup=25, rep=100, n_warmup=0, n_repeat=0, return_mode="median", quantiles=None,
                      flush_l2=True):
    """Times fn() on the current CUDA stream with torch.cuda.Event pairs; the L2 cache is flushed before each
    sample (writing a 256 MiB buffer) so that a sample does not read the previous one's data from L2."""
    import torch

    fn()
    torch.cuda.synchronize()
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda") if flush_l2 else None
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        if cache is not None:
            cache.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    nw, nr = _counts(start.elapsed_time(end) / 5, warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(nr)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(nr)]
    for s, e in zip(starts, ends):
        if cache is not None:
            cache.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return _summarise([s.elapsed_time(e) for s, e in zip(starts, ends)], return_mode, quantiles)


def bench_device_timer(fn, read_ms, warmup=25, rep=100, n_warmup=0, n_repeat=0, return_mode="median",
                       quantiles=None):
    """Runs fn() and, after each run, takes the device's own time of it from read_ms() (OpenCL profiling
    events); run counts from the budgets as for bench_wall."""
    fn()
    fn()
    est = read_ms()
    nw, nr = _counts(est, warmup, rep, n_warmup, n_repeat)
    for _ in range(nw):
        fn()
    times = []
    for _ in range(nr):
        fn()
        times.append(read_ms())
    return _summarise(times, return_mode, quantiles)
