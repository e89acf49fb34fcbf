"""XOR swizzles of shared tiles that mma.sync operands are read from (ldmatrix without bank conflicts).

A row of the tile is cut into 16-byte vectors; within each group of `swizzle_bytes / 16` vectors, vector c of
row r is stored at c ^ s(r), where s(r) takes the row's low three bits scaled to the group size (for a 128-byte
group s(r) = r % 8; 64 bytes: (r % 8) // 2; 32 bytes: (r % 8) // 4). Groups are laid out one after another as
the outermost physical dimension, so the physical index is (group, row, swizzled column)."""
from ....language.dtypes import DType


def _bits(dtype):
    return DType(str(dtype)).bits


def get_swizzle_layout(row_idx, col_idx, row_size, dtype, swizzle_bytes=None):
    """The physical index (group, row, column) of element (row_idx, col_idx) of a tile whose rows hold
    `row_size` elements of `dtype`: the 16-byte vector's position XOR-permuted by the row (see the module's
    text). `swizzle_bytes` (32, 64 or 128) defaults to min(128, the row's bytes)."""
    bits = _bits(dtype)
    row_bytes = bits * int(row_size) // 8
    if row_bytes % 32:
        raise ValueError(f"get_swizzle_layout: a row of {row_size} x {dtype} is {row_bytes} bytes; the swizzle "
                         "needs a multiple of 32 bytes")
    if swizzle_bytes is None:
        swizzle_bytes = min(128, row_bytes)
    if int(swizzle_bytes) not in (32, 64, 128):
        raise ValueError(f"get_swizzle_layout: swizzle_bytes must be 32, 64 or 128, not {swizzle_bytes}")
    per_vec = 128 // bits  # elements in 16 bytes
    group = int(swizzle_bytes) // 16  # vectors a swizzle group
    vec = col_idx // per_vec
    within = col_idx % per_vec
    permute = (row_idx % 8) // (8 // group)
    return vec // group, row_idx, ((vec % group) ^ permute) * per_vec + within


def make_mma_swizzle_layout(shared_buf, is_smooth=False):
    """A T.Layout for a shared tile read by mma.sync operands: get_swizzle_layout over its last two dimensions;
    the identity where `is_smooth` or where a row is not a multiple of 64 bytes (nothing to swizzle)."""
    from ....layout import Layout, _dim

    shape = tuple(_dim(d) for d in shared_buf.shape)
    dtype = shared_buf.dtype
    if is_smooth or (shape[-1] * _bits(dtype)) % 512:
        return Layout(shape, lambda *idx: idx, desc=f"identity {shared_buf.name}")

    def swizzled(*idx):
        return (*idx[:-2], *get_swizzle_layout(idx[-2], idx[-1], shape[-1], dtype))

    return Layout(shape, swizzled, desc=f"mma swizzle {shared_buf.name}")
