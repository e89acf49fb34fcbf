"""@tilelang.autotune and its results."""
from .tuner import AutotuneResult, AutoTuner, CandidateResult, autotune  # noqa: F401
