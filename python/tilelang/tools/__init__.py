"""Tools for kernel engineers: the lower trace (IR after every pass, with diffs), layout plots and the static
work estimate (Analyzer)."""
from .lower_trace import LowerTrace, PassRecord, available_targets, ir_lower_trace  # noqa: F401
from .plot_layout import layout_tables, plot_layout  # noqa: F401
from .analyzer import AnalysisResult, Analyzer  # noqa: F401,E402
