"""The OpenCL runtime's device, for users and tests (compiling and launching go through the backend
registry like every target; the runtime is loaded on first use, so importing tilelang never needs it)."""
from .. import _ffi
from ..errors import TileLangUnsupportedError


def device():
    """The OpenCL device kernels run on: name, vendor, version, driver, platform, extensions, local_mem,
    max_work_group, opencl_c_version, subgroups (cl_khr_subgroups with OpenCL C 2.0+: what target 'opencl'
    then uses for reductions) (raises TileLangUnsupportedError when there is no OpenCL runtime)."""
    if not _ffi.opencl_available():
        raise TileLangUnsupportedError(f"target 'opencl': {_ffi.opencl_unavailable_reason()}")
    d = dict(_ffi.opencl_device())
    d["local_mem"] = int(d["local_mem"])
    d["max_work_group"] = int(d["max_work_group"])
    d["extensions"] = d["extensions"].split()
    d["subgroups"] = d["subgroups"] == "1"
    return d
