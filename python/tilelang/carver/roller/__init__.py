"""TileLang's roller (tile hints for autotuning) is not implemented."""
from ...errors import TileLangUnsupportedError

raise TileLangUnsupportedError(
    "tilelang.carver.roller (TileLang's roller: tile hints and rasterization plans) is not supported by "
    "TileLang-C++ yet; give @tilelang.autotune an explicit list of configurations")
