"""tvm.target.Target: TVM's target strings ("llvm", "cuda", "hip -mcpu=gfx950") as tilelang Targets."""
from ..jit.target import Target as _Target
from ._names import unsupported_attr


class _Kind(str):
    """target.kind: compares equal to the kind's name and has TVM's .name."""

    @property
    def name(self):
        return str(self)


class Target(_Target):
    """Target("llvm") is the CPU target; "-mcpu=gfx942" on hip names the arch; target.kind.name as in TVM."""

    def __init__(self, target="auto", host=None):
        if isinstance(target, str):
            parts = target.split()
            if parts and parts[0] == "hip":  # TVM spells HIP's arch -mcpu=
                parts = [parts[0]] + [p.replace("-mcpu=", "-arch=") for p in parts[1:]]
            target = " ".join(parts)
        super().__init__(target)

    @property
    def kind(self):
        return _Kind(self._t.kind)

    @property
    def arch(self):
        return self._t.arch


def __getattr__(name):
    raise unsupported_attr("tvm.target", name)
