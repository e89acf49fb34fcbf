"""tvm.DataType: a dtype with TVM's accessors (bits, lanes, type_code, is_float...), equal to its name."""
import re

from ..language.dtypes import DType, dtype_str

_CODES = {"int": 0, "uint": 1, "float": 2, "handle": 3, "bfloat": 4}


class DataType(DType):
    """DataType("float16").bits == 16; DataType("float16x4").lanes == 4; == "float16" and T.float16."""

    def __init__(self, dtype):
        name = dtype if isinstance(dtype, str) else dtype_str(dtype)
        m = re.fullmatch(r"(.+?)x(\d+)", name) if isinstance(name, str) else None
        self.lanes = 1
        if m and not name.startswith("float8_e"):
            name, self.lanes = m.group(1), int(m.group(2))
        super().__init__(name)

    @property
    def bits(self):
        return super().bits

    @property
    def type_code(self):
        for prefix in ("bfloat", "uint", "int", "float"):
            if self.name.startswith(prefix):
                return _CODES[prefix]
        return _CODES["uint"] if self.name == "bool" else _CODES["handle"]

    def is_float(self):
        return "float" in self.name

    def is_int(self):
        return self.name.startswith("int")

    def is_uint(self):
        return self.name.startswith("uint")

    def with_lanes(self, lanes):
        return DataType(self.name if lanes == 1 else f"{self.name}x{lanes}")

    def __str__(self):
        return self.name if self.lanes == 1 else f"{self.name}x{self.lanes}"

    def __repr__(self):
        return f"DataType({str(self)!r})"

    def __eq__(self, other):
        if isinstance(other, DataType):
            return self.name == other.name and self.lanes == other.lanes
        return self.lanes == 1 and super().__eq__(other)

    def __hash__(self):
        return hash((self.name, self.lanes))
