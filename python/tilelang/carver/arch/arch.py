"""CUDA(target) / CDNA(target): TileLang's architecture records (sm_version, smem_cap, compute_max_core,
warp_size, ...) filled from this project's Target (limits per arch) and the present device where there is one."""
from ...jit.target import Target
from . import driver


class TileDevice:
    """What the two descriptions share."""

    platform = "unknown"

    def __init__(self, target, kind):
        t = Target(target)
        if t.kind != kind:
            raise ValueError(f"{type(self).__name__}(...) describes a {kind} target, got {t}")
        self.target = t
        self.smem_cap = int(t.smem_limit)
        self.max_smem_usage = self.smem_cap
        self.warp_size = int(t.warp_size)
        self.max_threads = int(t.max_threads)
        self.reg_cap = 65536
        self.transaction_size = [32, 128]

    def __repr__(self):
        return f"{type(self).__name__}({self.target})"


class CUDA(TileDevice):
    platform = "CUDA"

    def __init__(self, target="cuda"):
        super().__init__(target, "cuda")
        arch = str(self.target.arch)  # "sm_90a"
        self.sm_version = int("".join(c for c in arch.split("_")[1] if c.isdigit()))
        self.compute_capability = str(self.sm_version)
        self.compute_max_core = driver.get_num_sms() if driver.has_cuda_device() else None
        self.name = driver.get_device_name() if driver.has_cuda_device() else f"no device ({arch})"


class CDNA(TileDevice):
    platform = "CDNA"

    def __init__(self, target="hip"):
        super().__init__(target, "hip")
        self.arch = str(self.target.arch)
        self.compute_max_core = None  # no HIP runtime here: the device's compute units are unknown


def auto_infer_current_arch():
    return CUDA(Target("auto")) if driver.has_cuda_device() else None
