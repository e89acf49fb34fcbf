"""Targets as plain values: "cpu" (aliases "c", "llvm"), "cuda -arch=sm_80", {"kind": "cuda", "arch": ...}."""
from ..errors import TileLangUnsupportedError

_CPU = {"cpu", "c", "llvm", "host"}


def normalize(target):
    """Returns (kind, options dict)."""
    if target is None or target == "auto":
        return "cpu", {}
    if isinstance(target, dict):
        kind = target.get("kind", "")
        return kind, {k: v for k, v in target.items() if k != "kind"}
    if not isinstance(target, str):
        raise TileLangUnsupportedError(f"a target is a string such as 'cpu' or 'cuda -arch=sm_80', not {target!r}")
    parts = target.split()
    kind = parts[0].lower() if parts else ""
    opts = {}
    for p in parts[1:]:
        if p.startswith("-") and "=" in p:
            k, v = p.lstrip("-").split("=", 1)
            opts[k] = v
    if kind in _CPU:
        return "cpu", opts
    if kind in ("cuda", "hip", "metal", "opencl", "webgpu"):
        return kind, opts
    raise TileLangUnsupportedError(f"unknown target '{target}'; expected one of cpu (c, llvm), cuda, hip, metal, opencl")
