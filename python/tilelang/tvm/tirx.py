"""`import tilelang.tvm.tirx` gives the tir module (TileLang's TVM fork's name for it)."""
import sys

from . import tir

sys.modules[__name__] = tir
