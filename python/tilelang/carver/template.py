"""TileLang's roller templates (MatmulTemplate(...).with_arch(arch).recommend_hints()) are not implemented."""
from ..errors import TileLangUnsupportedError

raise TileLangUnsupportedError(
    "tilelang.carver.template (TileLang's roller: MatmulTemplate and its recommend_hints) is not supported by "
    "TileLang-C++ yet; give @tilelang.autotune an explicit list of configurations")
