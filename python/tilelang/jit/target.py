"""Targets as one value (tilelang.Target), parsed once in C++ (src/target/target.h): kind, arch,
features and limits, with a canonical spelling. Accepts every form TileLang users write: "cpu" / "c" /
"llvm", "cuda", "cuda -arch=sm_90a", {"kind": "cuda", "arch": "sm_80"}, "hip", "metal", "opencl",
"opencl -mattr=+subgroups" / {"kind": "opencl", "features": ["subgroups"]}, "metal -mattr=+metal4" /
{"kind": "metal", "keys": ["metal", "gpu", "metal4"]}, "auto" (a CUDA device when the driver finds one, else the CPU), or a Target."""
from .. import _ffi
from ..errors import TileLangUnsupportedError


class Target:
    """kind, arch, features, smem_limit, max_threads, max_registers, warp_size; str() is canonical."""

    def __init__(self, target="auto"):
        if isinstance(target, Target):
            self._t = target._t
            return
        if isinstance(target, _ffi.Target):
            self._t = target
            return
        if target is None or target == "auto":
            target = "cuda" if _cuda_device_present() else "cpu"
        if isinstance(target, dict):
            target = _from_dict(target)
        if not isinstance(target, str):
            raise TileLangUnsupportedError(f"a target is a string such as 'cpu' or 'cuda -arch=sm_80', a dict "
                                           f"{{'kind': ..., 'arch': ...}} or a tilelang.Target, not {target!r}")
        self._t = _ffi.parse_target(target)

    def __getattr__(self, name):
        if name == "_t":
            raise AttributeError(name)
        return getattr(self._t, name)

    def __str__(self):
        return str(self._t)

    def __repr__(self):
        return f"Target({str(self._t)!r})"

    def __eq__(self, other):
        try:
            return str(self) == str(Target(other))
        except Exception:  # noqa: BLE001 - not a target at all
            return False

    def __hash__(self):
        return hash(str(self))


def _from_dict(d):
    if "kind" not in d:
        raise TileLangUnsupportedError(f"a target dict needs a 'kind', got {d!r}")
    spec = str(d["kind"])
    for k, v in d.items():
        if k == "kind":
            continue
        if k == "features":  # ["subgroups", "-avx2"]: -mattr=+subgroups,-avx2
            if not isinstance(v, (list, tuple)) or not all(isinstance(f, str) and f for f in v):
                raise TileLangUnsupportedError(f"a target's 'features' is a list of names such as ['subgroups'], "
                                               f"got {v!r}")
            if v:
                spec += " -mattr=" + ",".join(f if f[0] in "+-" else "+" + f for f in v)
            continue
        if k == "keys":  # TVM's category tags: ["metal", "gpu", "metal4"]; "metal4" is Metal 4 (MSL 4.0)
            if not isinstance(v, (list, tuple)) or not all(isinstance(f, str) for f in v):
                raise TileLangUnsupportedError(f"a target's 'keys' is a list of names such as ['metal', 'gpu'], "
                                               f"got {v!r}")
            tags = {str(d["kind"]), "gpu", "cpu"}
            unknown = [f for f in v if f not in tags and f != "metal4"]
            if unknown or ("metal4" in v and d["kind"] != "metal"):
                raise TileLangUnsupportedError(f"target key(s) {unknown or ['metal4']} are not known for kind "
                                               f"{d['kind']!r} (keys: the kind, 'gpu', and 'metal4' for Metal 4)")
            if "metal4" in v:
                spec += " -mattr=+metal4"
            continue
        key = {"arch": "arch" if d["kind"] not in ("cpu", "c", "llvm") else "mcpu"}.get(k, k)
        spec += f" -{key}={v}"
    return spec


def _cuda_device_present():
    try:
        return bool(_ffi.cuda_driver_available())
    except Exception:  # noqa: BLE001
        return False


def normalize(target):
    """(kind, options) of a target: options hold 'arch' when the target names one."""
    t = Target(target)
    return t.kind, ({"arch": t.arch} if t.arch_given else {})


def default_target(target):
    """The target a compile uses when none is given (None), as TileLang's: $TILELANG_DEFAULT_TARGET, else "auto".
    An explicit target (the string "auto" included) is kept."""
    import os

    return target if target is not None else (os.environ.get("TILELANG_DEFAULT_TARGET") or "auto")


def default_execution_backend(execution_backend):
    """The execution backend when none is given (None): $TILELANG_EXECUTION_BACKEND, as TileLang's; "auto" and
    an unset variable leave the choice to the target (None)."""
    import os

    b = execution_backend if execution_backend is not None else os.environ.get("TILELANG_EXECUTION_BACKEND")
    return None if b in (None, "", "auto") else b
