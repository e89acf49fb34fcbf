"""tilelang.carver as TileLang programs use it: driver.get_num_sms() (a CUDA device's SM count; without
one the CPU cores, with a warning), CUDA(target) / CDNA(target) records from the target's limits, and a
clear error for the roller, which is not implemented."""
import os
import warnings

import pytest

import tilelang
from tilelang.carver.arch import CDNA, CUDA, driver
from tilelang.errors import TileLangUnsupportedError


def test_get_num_sms():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        n = driver.get_num_sms()
    if driver.has_cuda_device():
        assert n == int(tilelang._ffi.cuda_device_info(0)["sm_count"]) and n > 0
    else:
        want = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        assert n == want


@pytest.mark.skipif(driver.has_cuda_device(), reason="checks the error without a CUDA device")
def test_device_queries_without_a_device_say_so():
    with pytest.raises(TileLangUnsupportedError, match="needs a CUDA device"):
        driver.get_shared_memory_per_block()


def test_arch_records():
    c = CUDA("cuda -arch=sm_90a")
    assert c.sm_version == 90 and c.warp_size == 32 and c.smem_cap == tilelang.Target("cuda -arch=sm_90a").smem_limit
    assert CUDA("cuda -arch=sm_80").sm_version == 80
    h = CDNA("hip")
    assert h.warp_size == 64 and h.smem_cap == 65536
    with pytest.raises(ValueError, match="describes a cuda target"):
        CUDA("hip")


def test_roller_is_refused():
    with pytest.raises(TileLangUnsupportedError, match="MatmulTemplate"):
        from tilelang.carver.template import MatmulTemplate  # noqa: F401
    with pytest.raises(TileLangUnsupportedError, match="roller"):
        from tilelang.carver.roller.rasterization import NoRasterization  # noqa: F401
