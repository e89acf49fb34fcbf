"""Device queries (TileLang's tilelang.carver.arch.driver): the CUDA driver's counts for a present device.
Without a CUDA device, get_num_sms() returns the CPU's core count -- the workers that run the CPU target's
blocks, so a persistent kernel sized by it fills them -- and says so once in a warning."""
import os
import warnings

from ... import _ffi

_warned = False


def _info(device_id):
    if not _ffi.cuda_driver_available() or _ffi.cuda_device_count() <= device_id:
        return None
    return _ffi.cuda_device_info(device_id)


def has_cuda_device(device_id=0):
    return _info(device_id) is not None


def get_num_sms(device_id=0):
    """Streaming multiprocessors of CUDA device `device_id`; without one, the CPU cores (with a warning)."""
    info = _info(device_id)
    if info is not None:
        return int(info["sm_count"])
    global _warned
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not _warned:
        warnings.warn(f"tilelang.carver.arch.driver.get_num_sms(): no CUDA device; returning the {n} CPU core(s) "
                      "that run the CPU target's blocks", stacklevel=2)
        _warned = True
    return n


def _need(device_id, what):
    info = _info(device_id)
    if info is None:
        from ...errors import TileLangUnsupportedError

        raise TileLangUnsupportedError(f"tilelang.carver.arch.driver.{what}() needs a CUDA device, and none is "
                                       "present")
    return info


def get_device_name(device_id=0):
    return f"CUDA device {device_id} ({_need(device_id, 'get_device_name')['arch']})"


def get_shared_memory_per_block(device_id=0, format="bytes"):  # noqa: A002 - TileLang's keyword
    v = int(_need(device_id, "get_shared_memory_per_block")["max_shared_optin"])
    return {"bytes": v, "kb": v // 1024, "mb": v // (1024 * 1024)}[format]


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):  # noqa: A002
    return get_shared_memory_per_block(device_id, format)


def get_shared_memory_per_sm(device_id=0):
    return int(_need(device_id, "get_shared_memory_per_sm")["max_shared_per_sm"])


def get_registers_per_block(device_id=0):
    return int(_need(device_id, "get_registers_per_block")["max_registers_per_block"])


def get_device_capability(device_id=0):
    major, minor = _need(device_id, "get_device_capability")["compute_capability"].split(".")
    return int(major), int(minor)
