"""TileLang's hand-written-mma emitters. Not implemented here: T.gemm lowers shared and register operands to
ldmatrix + mma.sync (and to every other target's tensor instructions) itself. The classes exist so that programs
importing them load; constructing one raises TileLangUnsupportedError with what to write instead."""
from ....errors import TileLangUnsupportedError


class _Unimplemented:
    def __init__(self, *args, **kwargs):
        raise TileLangUnsupportedError(
            f"tilelang.cuda.intrinsics.{type(self).__name__} (thread-level ldmatrix / mma.sync macros) is not "
            "implemented by this compiler; write the tile-level T.gemm(A_shared, B_shared, C_local) instead, which "
            "lowers to ldmatrix + mma.sync on sm_80+ (and to every other target)")


class TensorCoreIntrinEmitter(_Unimplemented):
    pass


class TensorCoreIntrinEmitterWithLadderTransform(_Unimplemented):
    pass


class INT4TensorCoreIntrinEmitter(_Unimplemented):
    pass
