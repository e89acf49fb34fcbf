"""tilelang.contrib.nvcc: the compute capability TileLang programs ask for (`nvcc.get_target_compute_version()`
to pick a code path by architecture). Compiling through nvcc is this compiler's business (NVRTC), not the
program's: the other functions of TileLang's module are not provided."""
import re

from ..errors import TileLangUnsupportedError


def _arch_of(target):
    if target is None:
        return None
    if isinstance(target, dict):
        return target.get("arch")
    arch = getattr(target, "arch", None)
    if arch:
        return str(arch)
    m = re.search(r"sm_\d+[af]?", str(target))
    return m.group(0) if m else None


def parse_compute_version(compute_version):
    """"9.0" -> (9, 0)."""
    parts = str(compute_version).split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"a compute version is 'major.minor', got {compute_version!r}")
    return int(parts[0]), int(parts[1])


def get_target_compute_version(target=None):
    """The compute capability ("8.0", "9.0", "12.0") of `target` (a target string such as "cuda -arch=sm_90a",
    a Target, or {"kind": "cuda", "arch": ...}), else of CUDA device 0. Without either: an error, not a guess."""
    arch = _arch_of(target)
    if arch:
        digits = re.fullmatch(r"sm_(\d+)[af]?", arch)
        if not digits:
            raise ValueError(f"a CUDA arch is spelled sm_XY (sm_90a), got {arch!r}")
        d = digits.group(1)
        return f"{d[:-1]}.{d[-1]}"
    from ..carver.arch import driver

    if driver.has_cuda_device():
        major, minor = driver.get_device_capability()
        return f"{major}.{minor}"
    raise TileLangUnsupportedError("tilelang.contrib.nvcc.get_target_compute_version(): no target with an arch was "
                                   "given and no CUDA device is present")


def get_target_arch(compute_version):
    """"9.0" or (9, 0) -> "90"."""
    major, minor = parse_compute_version(compute_version) if isinstance(compute_version, str) else compute_version
    return str(major * 10 + minor)


def have_tensorcore(compute_version=None, target=None):
    """Whether the architecture has tensor cores (sm_70 and later)."""
    major, _ = parse_compute_version(compute_version or get_target_compute_version(target))
    return major >= 7
