from .mma_layout import get_swizzle_layout, make_mma_swizzle_layout  # noqa: F401
from .utils import get_mma_micro_size, mma_store_index_map  # noqa: F401
