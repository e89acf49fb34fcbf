"""tvm.testing: the test decorators TileLang programs take from it (tilelang.testing's)."""
from ..testing import requires_package  # noqa: F401
from ._names import unsupported_attr


def __getattr__(name):
    from .. import testing as _t

    if not name.startswith("_") and hasattr(_t, name):
        return getattr(_t, name)
    raise unsupported_attr("tvm.testing", name)
