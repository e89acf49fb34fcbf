"""Architecture descriptions: CUDA(target) / CDNA(target) with TileLang's attribute names, from this
project's target limits and, where a CUDA device is present, the device's own counts."""
from . import driver  # noqa: F401
from .arch import CDNA, CUDA, TileDevice, auto_infer_current_arch  # noqa: F401
