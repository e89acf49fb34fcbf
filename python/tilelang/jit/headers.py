"""Where the device headers (include/tl_device/...) are, for every backend's compile and for the tools."""
import os

from ..errors import TileLangUnsupportedError

_INCLUDE_DIR = None


def include_dir():
    """Where the device headers (tl_device/...) are: installed with the package or in the source tree."""
    global _INCLUDE_DIR
    if _INCLUDE_DIR is None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        candidates = [os.path.join(here, "include"),
                      os.path.join(os.path.dirname(os.path.dirname(here)), "include")]
        for c in candidates:
            if os.path.exists(os.path.join(c, "tl_device", "cpu", "runtime.h")):
                _INCLUDE_DIR = c
                break
        else:
            raise TileLangUnsupportedError("cannot find the tl_device headers; reinstall the package")
    return _INCLUDE_DIR
