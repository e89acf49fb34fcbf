"""tilelang.language.fp8: TileLang's choice of fp8 type for a format. This compiler's fp8 types are OCP's
(float8_e4m3fn, float8_e5m2) on every target; the HIP lowering re-encodes them for CDNA3's FNUZ MFMA
(docs/fp8.md), so the answer does not depend on the device as it does in TileLang (which picks the fnuz types
on ROCm)."""
from .dtypes import DType

__all__ = ["determine_fp8_type", "determine_torch_fp8_type"]


def _check(fp8_format):
    if fp8_format not in ("e4m3", "e5m2"):
        raise ValueError(f"fp8_format is 'e4m3' or 'e5m2', got {fp8_format!r}")


def determine_fp8_type(fp8_format="e4m3"):
    _check(fp8_format)
    return DType("float8_e4m3fn" if fp8_format == "e4m3" else "float8_e5m2")


def determine_torch_fp8_type(fp8_format="e4m3"):
    _check(fp8_format)
    import torch

    return torch.float8_e4m3fn if fp8_format == "e4m3" else torch.float8_e5m2
