"""tilelang.carver: the device queries TileLang programs call (`from tilelang.carver.arch import driver`;
`driver.get_num_sms()`) and the architecture descriptions `CUDA(target)` / `CDNA(target)`. TileLang's
roller (tilelang.carver.template / .roller: recommended tile hints) is not implemented; importing it raises
a TileLangUnsupportedError that says so."""
from . import arch  # noqa: F401
