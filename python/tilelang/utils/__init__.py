"""tilelang.utils: the helpers TileLang programs import from it (tilelang.utils.tensor)."""
from . import tensor  # noqa: F401
from .tensor import TensorSupplyType, get_tensor_supply, torch_assert_close  # noqa: F401


def __getattr__(name):
    from ..tvm._names import unsupported_attr

    raise unsupported_attr("tilelang.utils", name)
