"""Checking and timing one compiled candidate: shared by the local executor (tuner.py) and the Ray benchmark
tasks (ray_executor.py)."""
import time

from . import compile_pool


def measure_kernel(kernel, m, inputs_box, best_latency=None):
    """Checks one compiled candidate against m["ref_prog"] and times it; -> (status, latency, reason).
    `m`: AutoTuner._measure_options(); inputs_box[0]: the inputs shared by the candidates (made here when
    absent or not reused). Used by the local executor and by the Ray benchmark tasks alike.
    m["supply_prog"](input_specs) makes the inputs instead of the profiler; m["manual_check_prog"](outputs,
    ref_outputs) judges the outputs instead of the tolerance check. With m["early_stop_factor"] and the best
    latency so far, a short estimate (a few runs) over best * factor ends the candidate as "early_stopped"
    without the full timing."""
    try:
        prof = kernel.get_profiler(**m["profiler_kw"])
        given = m.get("inputs")
        if given is not None and len(given) != len(prof.input_specs):
            return "run_error", None, (f"set_autotune_inputs gave {len(given)} tensor(s), but the kernel takes "
                                       f"{len(prof.input_specs)} input(s): "
                                       f"{', '.join(p.name for p in prof.input_specs)}")
        inputs = list(given) if given is not None else inputs_box[0] if m["cache_input_tensors"] else None
        if inputs is None or len(inputs) != len(prof.input_specs):
            supply = m.get("supply_prog")
            inputs = list(supply(prof.input_specs)) if supply is not None else prof.make_inputs()
            if len(inputs) != len(prof.input_specs):
                return "run_error", None, (f"supply_prog returned {len(inputs)} tensor(s), but the kernel takes "
                                           f"{len(prof.input_specs)} input(s): "
                                           f"{', '.join(p.name for p in prof.input_specs)}")
            inputs_box[0] = inputs
        t0 = time.perf_counter()
        if m["ref_prog"] is not None and not m["skip_check"]:
            try:
                if m.get("manual_check_prog") is not None:
                    prof.manual_assert_close(m["ref_prog"], input_tensors=inputs,
                                             manual_check_prog=m["manual_check_prog"])
                else:
                    prof.assert_allclose(m["ref_prog"], input_tensors=inputs, atol=m["atol"], rtol=m["rtol"],
                                         max_mismatched_ratio=m["max_mismatched_ratio"])
            except AssertionError as e:
                return "wrong", None, f"result differs from ref_prog: {e}"
        else:
            kernel(*inputs)
        if m["timeout"] and time.perf_counter() - t0 > m["timeout"]:
            return "timeout", None, f"one run took over {m['timeout']} s"
        factor = m.get("early_stop_factor")
        if factor and best_latency is not None:
            estimate = float(prof.do_bench(n_warmup=1, n_repeat=3, input_tensors=inputs, return_mode="min"))
            if estimate > best_latency * factor:
                return "early_stopped", estimate, (f"estimated {estimate:.4f} ms > {factor} x the best so far "
                                                   f"({best_latency:.4f} ms): not timed in full")
        latency = float(prof.do_bench(warmup=m["warmup"], rep=m["rep"], input_tensors=inputs,
                                      backend=m.get("bench_backend", "auto"),
                                      return_mode=m["return_mode"]))
        return "ok", latency, None
    except Exception as e:  # noqa: BLE001
        return "run_error", None, compile_pool.describe_error(e)
