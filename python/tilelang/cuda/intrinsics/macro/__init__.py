from .mma_macro_generator import (  # noqa: F401
    TensorCoreIntrinEmitter,
    TensorCoreIntrinEmitterWithLadderTransform,
    INT4TensorCoreIntrinEmitter,
)
