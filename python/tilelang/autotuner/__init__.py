"""@tilelang.autotune and its results."""
from .capture import get_autotune_inputs, set_autotune_inputs  # noqa: F401
from .tuner import AutotuneResult, AutoTuner, CandidateResult, autotune  # noqa: F401
