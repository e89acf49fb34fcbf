"""Checking and timing one compiled candidate: shared by the local executor (tuner.py) and the Ray benchmark
tasks (ray_executor.py)."""
import time

from . import compile_pool


def measure_kernel(kernel, m, inputs_box):
    """Checks one compiled candidate against m["ref_prog"] and times it; -> (status, latency, reason).
    `m`: AutoTuner._measure_options(); inputs_box[0]: the inputs shared by the candidates (made here when
    absent or not reused). Used by the local executor and by the Ray benchmark tasks alike."""
    try:
        prof = kernel.get_profiler(**m["profiler_kw"])
        given = m.get("inputs")
        if given is not None and len(given) != len(prof.input_specs):
            return "run_error", None, (f"set_autotune_inputs gave {len(given)} tensor(s), but the kernel takes "
                                       f"{len(prof.input_specs)} input(s): "
                                       f"{', '.join(p.name for p in prof.input_specs)}")
        inputs = list(given) if given is not None else inputs_box[0] if m["cache_input_tensors"] else None
        if inputs is None or len(inputs) != len(prof.input_specs):
            inputs = prof.make_inputs()
            inputs_box[0] = inputs
        t0 = time.perf_counter()
        if m["ref_prog"] is not None and not m["skip_check"]:
            try:
                prof.assert_allclose(m["ref_prog"], input_tensors=inputs, atol=m["atol"], rtol=m["rtol"],
                                     max_mismatched_ratio=m["max_mismatched_ratio"])
            except AssertionError as e:
                return "wrong", None, f"result differs from ref_prog: {e}"
        else:
            kernel(*inputs)
        if m["timeout"] and time.perf_counter() - t0 > m["timeout"]:
            return "timeout", None, f"one run took over {m['timeout']} s"
        latency = float(prof.do_bench(warmup=m["warmup"], rep=m["rep"], input_tensors=inputs,
                                      return_mode=m["return_mode"]))
        return "ok", latency, None
    except Exception as e:  # noqa: BLE001
        return "run_error", None, compile_pool.describe_error(e)
