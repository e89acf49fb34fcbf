"""tilelang.utils.tensor: TensorSupplyType, get_tensor_supply and torch_assert_close as TileLang names them
(the profiler's tensor supply and tilelang.testing's comparison)."""
from ..profiler.supply import TensorSupplyType, make_tensor
from ..testing import torch_assert_close  # noqa: F401
from ..language.dtypes import dtype_str

__all__ = ["TensorSupplyType", "get_tensor_supply", "torch_assert_close"]


def get_tensor_supply(supply_type=TensorSupplyType.Integer):
    """A function from a kernel parameter (anything with .dtype and a constant .shape, e.g. the profiler's
    ParamSpec) to a tensor filled as `supply_type` says: a NumPy array, or a torch tensor on the current CUDA
    device where torch and a CUDA device are present (as TileLang returns)."""

    def get_tensor(param):
        shape = getattr(param, "shape", None)
        if not shape:
            raise ValueError(f"a tensor needs a shape, got {param!r} (a scalar or a dynamic shape)")
        dims = []
        for d in shape:
            try:
                dims.append(int(d))
            except (TypeError, ValueError):
                raise ValueError(f"a tensor needs a constant shape, got {list(shape)} (a dynamic size: give the "
                                 "profiler dynamic_values)") from None
        arr = make_tensor(dtype_str(param.dtype), dims, supply_type)
        try:
            import torch

            if torch.cuda.is_available():
                return torch.from_numpy(arr).cuda()
        except ImportError:
            pass
        return arr

    return get_tensor
