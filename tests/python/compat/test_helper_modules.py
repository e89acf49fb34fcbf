"""Helper modules TileLang programs import: tilelang.utils.tensor (get_tensor_supply, TensorSupplyType,
torch_assert_close) and tilelang.language.fp8 (determine_fp8_type)."""
import numpy as np
import pytest

import tilelang.language as T
from tilelang.language.fp8 import determine_fp8_type
from tilelang.profiler.supply import ParamSpec
from tilelang.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close


def test_get_tensor_supply():
    p = ParamSpec(0, "A", "float16", (3, 5))
    t = np.asarray(get_tensor_supply(TensorSupplyType.One)(p))
    assert t.shape == (3, 5) and t.dtype == np.float16 and (t == 1).all()
    i = np.asarray(get_tensor_supply(TensorSupplyType.Integer)(ParamSpec(1, "B", "int8", (64,))))
    assert i.dtype == np.int8 and i.min() >= -2 and i.max() <= 2
    with pytest.raises(ValueError, match="constant shape"):
        get_tensor_supply()(ParamSpec(2, "C", "float32", (T.dynamic("m"),)))


def test_torch_assert_close_is_tilelang_testing():
    import tilelang.testing

    assert torch_assert_close is tilelang.testing.torch_assert_close


def test_determine_fp8_type():
    assert determine_fp8_type() == T.float8_e4m3fn and determine_fp8_type("e5m2") == T.float8_e5m2
    with pytest.raises(ValueError, match="e4m3"):
        determine_fp8_type("e3m4")
