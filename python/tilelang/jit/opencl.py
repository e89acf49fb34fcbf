"""The OpenCL backend's part of JITKernel: build through the OpenCL runtime (loaded on first use, so
importing tilelang never needs it) and the checks that belong to the call."""
from .. import _ffi
from ..errors import TileLangUnsupportedError


def build(func, execution_backend, use_cache, cache_dir, pass_configs):
    """The OpenCLModule of ``func``: lowered, generated, built for the runtime's device (cached on disk)."""
    if execution_backend not in (None, "auto", "opencl"):
        raise TileLangUnsupportedError(f"execution_backend '{execution_backend}' is not available for target "
                                       "'opencl' (use 'auto': the OpenCL runtime's device)")
    if not _ffi.opencl_available():
        raise TileLangUnsupportedError(f"target 'opencl': {_ffi.opencl_unavailable_reason()}")
    cfg = {k: str(v) for k, v in pass_configs.items()}
    return _ffi.build_opencl(func, use_cache, cache_dir, cfg, True)


def device():
    """The OpenCL device kernels run on: name, vendor, version, driver, platform, extensions, local_mem,
    max_work_group (raises TileLangUnsupportedError when there is no OpenCL runtime)."""
    if not _ffi.opencl_available():
        raise TileLangUnsupportedError(f"target 'opencl': {_ffi.opencl_unavailable_reason()}")
    d = dict(_ffi.opencl_device())
    d["local_mem"] = int(d["local_mem"])
    d["max_work_group"] = int(d["max_work_group"])
    d["extensions"] = d["extensions"].split()
    return d
