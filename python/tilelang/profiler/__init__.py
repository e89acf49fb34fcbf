"""kernel.get_profiler(): time a compiled kernel and check it against a reference program.

    profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Integer)
    profiler.assert_allclose(lambda A, B: A.astype("float64") @ B, atol=1e-2, rtol=1e-2)
    ms = profiler.do_bench()

Inputs are NumPy arrays made for the kernel's input parameters (those not in out_idx) from their dtypes and
shapes; symbolic dimensions come from ``shapes`` / ``dynamic_values`` (see supply.py). For a CUDA kernel the
inputs go to the GPU as PyTorch tensors (torch is imported only then).
"""
import inspect

import numpy as np

from ..errors import TileLangArgumentError, TileLangUnsupportedError
from .bench import bench_cuda_events, bench_wall
from .supply import DEFAULT_DYNAMIC_SIZE, ParamSpec, TensorSupplyType, make_tensor, param_specs  # noqa: F401

__all__ = ["Profiler", "TensorSupplyType", "do_bench"]



def _to_numpy(x):
    if isinstance(x, np.ndarray):
        return x
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu()
        if str(x.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):
            x = x.float()
        return x.numpy()
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    return np.asarray(x)


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (tuple, list)) else [x]


def do_bench(fn, warmup=25, rep=100, n_warmup=0, n_repeat=0, backend="wall", quantiles=None, return_mode="median"):
    """Times a zero-argument callable; returns milliseconds (the median by default). backend: "wall", or
    "event" (CUDA events, needs torch with a GPU); TileLang's "cupti" / "cudagraph" time with CUDA events,
    and any GPU backend falls back to the wall clock (with a warning) where no GPU is usable."""
    if backend != "wall":
        backend = _choose_backend(backend, _cuda_available())
    if backend == "event":
        return bench_cuda_events(fn, warmup, rep, n_warmup, n_repeat, return_mode, quantiles)
    return bench_wall(fn, warmup, rep, n_warmup, n_repeat, return_mode, quantiles)


# TileLang's do_bench backends. "wall" is this compiler's own; the GPU ones fall back with a note when the
# kernel does not run on a GPU (CPU target, emulator) or the backend is not available here.
_GPU_BACKENDS = ("event", "cupti", "cudagraph", "torch")


def _choose_backend(backend, on_gpu):
    from ..log import warn

    if backend in (None, "auto"):
        return "event" if on_gpu else "wall"
    if backend == "wall":
        return backend
    if backend not in _GPU_BACKENDS:
        raise TileLangArgumentError(f"do_bench backend '{backend}' is not one of 'auto', 'wall', "
                                    + ", ".join(repr(b) for b in _GPU_BACKENDS))
    if not on_gpu or not _cuda_available():
        why = "this kernel does not run on a GPU" if not on_gpu else "CUDA timing needs PyTorch and a GPU"
        warn(f"do_bench(backend='{backend}'): {why}; timing with the wall clock instead")
        return "wall"
    if backend != "event":
        warn(f"do_bench(backend='{backend}') is not implemented in TileLang-C++; timing with CUDA events instead")
    return "event"


def _runs_on_gpu(kernel):
    """Whether the kernel's runtime module lives on a device (the backend registry says; a kernel built
    for the emulator has none: NumPy in, wall clock)."""
    mod = getattr(kernel, "_mod", None)
    return mod is not None and mod.device != "cpu"


class Profiler:
    """Benchmarks and checks one JITKernel."""

    def __init__(self, kernel, tensor_supply_type=None, shapes=None, dynamic_values=None, seed=0):
        self.kernel = kernel
        self.supply_type = TensorSupplyType.Auto if tensor_supply_type is None else tensor_supply_type
        self.specs = param_specs(kernel.func, shapes, dynamic_values)
        self.out_idx = list(getattr(kernel, "out_idx", []) or [])
        self.seed = seed
        self._inputs = None
        self._device_inputs = None

    # ---- inputs --------------------------------------------------------------------------------
    @property
    def input_specs(self):
        """The parameters the caller passes (all of them when the kernel has no out_idx)."""
        return [s for s in self.specs if s.index not in self.out_idx]

    def make_inputs(self, seed=None):
        """Fresh NumPy inputs (scalars for scalar parameters) for the kernel's input parameters."""
        rng = np.random.default_rng(self.seed if seed is None else seed)
        return [make_tensor(s.dtype, s.shape, self.supply_type, rng) for s in self.input_specs]

    def get_inputs(self):
        """The profiler's own inputs, made once and reused."""
        if self._inputs is None:
            self._inputs = self.make_inputs()
        return self._inputs

    def _on_device(self, inputs):
        """The inputs as the kernel's target wants them: NumPy for the CPU, torch GPU tensors for CUDA/HIP."""
        if not _runs_on_gpu(self.kernel):
            return list(inputs)
        try:
            import torch
        except ImportError:
            raise TileLangUnsupportedError(
                f"profiling a '{self.kernel.kind}' kernel needs PyTorch with a GPU") from None
        out = []
        for x in inputs:
            if isinstance(x, np.ndarray):
                name = x.dtype.name
                t = torch.from_numpy(x.astype(np.float32) if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")
                                     else x)
                out.append(t.to("cuda").to(getattr(torch, name)))
            else:
                out.append(x)
        return out

    def _device_args(self, input_tensors):
        if input_tensors is not None:
            return list(input_tensors)
        if self._device_inputs is None:
            self._device_inputs = self._on_device(self.get_inputs())
        return self._device_inputs

    # ---- running -------------------------------------------------------------------------------
    def run_once(self, func=None, input_tensors=None):
        """Runs the kernel (or func) once on the inputs; returns what it returns."""
        args = self._device_args(input_tensors)
        return (func or self.kernel)(*args)

    def _outputs(self, args, returned):
        """The kernel's outputs as NumPy arrays: what it returned (out_idx) or, without out_idx, all params."""
        if self.out_idx:
            return [_to_numpy(x) for x in _as_list(returned)]
        return [_to_numpy(a) for a in args]

    # ---- timing --------------------------------------------------------------------------------
    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=0, n_repeat=0, input_tensors=None, backend="auto",
                 quantiles=None, return_mode="median"):
        """Milliseconds per run of the kernel (or of ``func`` called with the same inputs), the median by
        default. warmup / rep are time budgets in ms; positive n_warmup / n_repeat fix the run counts.
        backend "auto": CUDA events for a CUDA/HIP kernel, the wall clock otherwise."""
        args = self._device_args(input_tensors)
        target = func if func is not None else self.kernel
        if func is not None and _takes_no_args(func):
            call = func
        else:
            def call():
                return target(*args)
        mod = getattr(self.kernel, "_mod", None)
        if func is None and mod is not None and backend in ("auto", "event") and not _runs_on_gpu(self.kernel):
            call()
            if mod.last_launch_ms >= 0:
                # the runtime measures its launches itself (OpenCL profiling events): the kernel's device
                # time, without the host<->device copies
                from .bench import bench_device_timer

                return bench_device_timer(call, lambda: mod.last_launch_ms, warmup, rep, n_warmup, n_repeat,
                                          return_mode, quantiles)
        backend = _choose_backend(backend, _runs_on_gpu(self.kernel))
        return do_bench(call, warmup, rep, n_warmup, n_repeat, backend, quantiles, return_mode)

    # ---- checking ------------------------------------------------------------------------------
    def _outputs_and_expected(self, reference_program, input_tensors):
        """(output names, the kernel's outputs, the reference's outputs) on the same inputs."""
        host = [x.copy() if isinstance(x, np.ndarray) else x for x in
                (self.get_inputs() if input_tensors is None else [_to_numpy(t) if not np.isscalar(t) else t
                                                                  for t in input_tensors])]
        ref_in = [x.copy() if isinstance(x, np.ndarray) else x for x in host]
        expected = [_to_numpy(r) for r in _as_list(_run_reference(reference_program, ref_in))]
        args = self._on_device(host) if input_tensors is None else list(input_tensors)
        got = self._outputs(args, self.kernel(*args))
        names = [s.name for s in self.specs if not self.out_idx or s.index in self.out_idx]
        if not self.out_idx:
            got, names = got[len(got) - len(expected):], names[len(names) - len(expected):]
        if len(expected) != len(got):
            raise AssertionError(f"the reference program returned {len(expected)} outputs but kernel "
                                 f"'{self.kernel.func.name}' has {len(got)} (out_idx={self.out_idx})")
        return names, got, expected

    def manual_assert_close(self, reference_program, input_tensors=None, manual_check_prog=None):
        """Runs the kernel and ``reference_program`` on the same inputs, then calls
        ``manual_check_prog(kernel_outputs, reference_outputs)`` (two lists, in output order) to judge them;
        it raises to reject. TileLang's profiler method of the same name."""
        if manual_check_prog is None or not callable(manual_check_prog):
            raise TileLangArgumentError("manual_assert_close needs manual_check_prog=f(outputs, ref_outputs)")
        _, got, expected = self._outputs_and_expected(reference_program, input_tensors)
        manual_check_prog(got, expected)

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.0):
        """Runs the kernel and ``reference_program`` on the same inputs and compares in float64.

        The reference gets NumPy copies of the inputs (CPU torch tensors instead when it is written with
        torch and fails on NumPy arrays, see _run_reference) and returns the expected outputs: those in out_idx, or,
        for a kernel without out_idx (which writes into its arguments), the expected values of its last
        len(returned) parameters. Raises AssertionError naming the output, the number of mismatches, the max
        abs / rel error and the index of the worst element. ``max_mismatched_ratio`` tolerates that fraction
        of elements out of tolerance (0 by default: every element must match).
        """
        names, got, expected = self._outputs_and_expected(reference_program, input_tensors)
        for name, g, e in zip(names, got, expected):
            compare_arrays(g, e, atol, rtol, max_mismatched_ratio, label=f"output '{name}' of kernel "
                                                                          f"'{self.kernel.func.name}'")


def _as_torch(x):
    """A CPU torch tensor holding a NumPy input (bfloat16 / fp8 go through float32: torch cannot read
    ml_dtypes' arrays)."""
    import torch

    if not isinstance(x, np.ndarray):
        return x
    name = x.dtype.name
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return torch.from_numpy(x.astype(np.float32)).to(getattr(torch, name))
    return torch.from_numpy(x.copy())


def _run_reference(reference_program, inputs):
    """Calls the reference on NumPy inputs; a reference written with torch (as TileLang's examples write
    theirs: ``A.float()``, ``torch.softmax(A, ...)``) fails on NumPy arrays with an AttributeError or a
    TypeError, and is then called again on CPU torch tensors holding the same values, where torch is
    installed. Any other failure, or the same failure on torch tensors, is the reference's own."""
    try:
        return reference_program(*inputs)
    except (AttributeError, TypeError) as first:
        try:
            import torch  # noqa: F401
        except ImportError:
            raise first from None
        return reference_program(*[_as_torch(x) for x in inputs])


def compare_arrays(got, expected, atol, rtol, max_mismatched_ratio=0.0, label="output"):
    """Compares in float64; raises AssertionError with the mismatch count, max abs / rel error and the worst
    element's index and values."""
    g = np.asarray(got).astype(np.float64)
    e = np.asarray(expected).astype(np.float64)
    if g.shape != e.shape:
        try:
            e = np.broadcast_to(e, g.shape)
        except ValueError:
            raise AssertionError(f"{label}: shape {g.shape} but the reference's is {e.shape}") from None
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(g - e)
        tol = atol + rtol * np.abs(e)
        same = (g == e) | (np.isnan(g) & np.isnan(e))
        bad = ~same & ~(diff <= tol)
    nbad = int(bad.sum())
    if g.size == 0 or nbad <= max_mismatched_ratio * g.size:
        return
    diff_for_max = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    rel = diff_for_max / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
    excess = np.where(bad, np.where(np.isnan(diff), np.inf, diff - tol), -np.inf)
    worst = np.unravel_index(int(np.argmax(excess)), g.shape)
    iabs = np.unravel_index(int(np.argmax(diff_for_max)), g.shape)
    irel = np.unravel_index(int(np.argmax(rel)), g.shape)
    idx = lambda t: tuple(int(v) for v in t)  # noqa: E731
    raise AssertionError(
        f"{label}: {nbad} of {g.size} elements ({100.0 * nbad / g.size:.3g}%) differ beyond atol={atol}, rtol={rtol}"
        f"{f' (allowed ratio {max_mismatched_ratio})' if max_mismatched_ratio else ''}; "
        f"worst element {idx(worst)}: got {float(g[worst]):.6g}, expected {float(e[worst]):.6g}; "
        f"max abs error {diff_for_max[iabs]:.6g} at {idx(iabs)}; max rel error {rel[irel]:.6g} at {idx(irel)}")


def _takes_no_args(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return not any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
                   for p in sig.parameters.values())


def _cuda_available():
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
