"""tilelang.tools.Analyzer: TileLang's static estimate of a kernel's work -- the FLOPs of its T.gemm calls and
the bytes its T.copy calls move to or from global memory, over its grid and loops -- and the time that work
takes on an architecture at its peak (the larger of compute time and memory time).

    result = Analyzer.analysis(prim_func, CUDA("cuda"))
    result.total_flops, result.total_global_bytes, result.estimated_time, result.expected_tflops,
    result.expected_bandwidth_GBps

Peaks per architecture (FP16 tensor-core FLOP/s and DRAM bandwidth) are this project's table of the parts'
published figures; an architecture not in it uses the A100's, with a warning."""
from dataclasses import dataclass

from .. import _ffi
from ..errors import TileLangTypeError

# sm version -> (tensor-core fp16 dense FLOP/s, DRAM bytes/s): A100, A10/RTX 30, L40/RTX 40, H100 SXM, B200
_PEAKS = {80: (312e12, 2.0e12), 86: (125e12, 0.6e12), 89: (181e12, 0.86e12), 90: (989e12, 3.35e12),
          100: (2250e12, 8.0e12)}
_CDNA_PEAK = (383e12, 3.2e12)  # MI250X


@dataclass(frozen=True)
class AnalysisResult:
    total_flops: int
    total_global_bytes: int
    estimated_time: float  # seconds
    expected_tflops: float
    expected_bandwidth_GBps: float


class Analyzer:
    """Counts a PrimFunc's work (see the module docstring); `Analyzer.analysis(fn, device)` is the entry."""

    def __init__(self, fn, device):
        if not isinstance(fn, _ffi.PrimFunc):
            raise TileLangTypeError(f"Analyzer takes a @T.prim_func (an eager kernel's f.get_tir(...)), got "
                                    f"{type(fn).__name__}")
        self.fn, self.device = fn, device
        self.total_flops = self.total_global_bytes = 0

    def ir_pass(self):
        flops, nbytes, _, unknown = _ffi.work_of(self.fn)
        if unknown:
            from ..log import warn

            warn(f"Analyzer: the extent {unknown} of '{self.fn.name}' is not a constant; it was counted once")
        self.total_flops, self.total_global_bytes = int(flops), int(nbytes)
        return self

    def calculate(self):
        platform = getattr(self.device, "platform", "")
        if platform == "CDNA":
            peak_flops, peak_bw = _CDNA_PEAK
        else:
            sm = getattr(self.device, "sm_version", None)
            if sm not in _PEAKS:
                from ..log import warn

                warn(f"Analyzer: no peak figures for {self.device!r}; using the A100's")
            peak_flops, peak_bw = _PEAKS.get(sm, _PEAKS[80])
        t = max(self.total_flops / peak_flops, self.total_global_bytes / peak_bw, 1e-12)
        return AnalysisResult(self.total_flops, self.total_global_bytes, t, self.total_flops / t / 1e12,
                              self.total_global_bytes / t / 1e9)

    @classmethod
    def analysis(cls, fn, device):
        return cls(fn, device).ir_pass().calculate()
