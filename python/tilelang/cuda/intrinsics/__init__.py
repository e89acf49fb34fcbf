"""`tilelang.cuda.intrinsics` as TileLang's programs import it: shared-memory swizzle layouts for mma.sync operands
and the index maps of the mma fragments. TileLang's macro emitters (thread-level ldmatrix / mma code written by
hand) are not implemented: constructing one raises TileLangUnsupportedError naming it (T.gemm does that work
here)."""
from .layout.utils import get_mma_micro_size, mma_store_index_map  # noqa: F401
from .layout.mma_layout import get_swizzle_layout, make_mma_swizzle_layout  # noqa: F401
from .macro.mma_macro_generator import (  # noqa: F401
    TensorCoreIntrinEmitter,
    TensorCoreIntrinEmitterWithLadderTransform,
    INT4TensorCoreIntrinEmitter,
)
