"""Index maps of mma.sync fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16"): which lane and register
hold an element of the 16 x 8 accumulator, and the micro-tile sizes of an input type."""


def get_mma_micro_size(dtype):
    """(m, n, k) of one mma.sync for `dtype` inputs: 16 x 16 x 16 for 16-bit types, k 32 for 8-bit ones."""
    from ....language.dtypes import DType

    bits = DType(str(dtype)).bits
    if bits not in (8, 16, 32, 4):
        raise ValueError(f"get_mma_micro_size: no mma.sync micro tile for {dtype}")
    return 16, 16, (256 // bits if bits != 32 else 8)


def mma_store_index_map(thread_id, local_id):
    """(row, column) in a 16 x 16 accumulator tile (two m16n8 halves) of register `local_id` (0..7) of lane
    `thread_id`: a lane holds rows lane/4 and lane/4 + 8, columns 2*(lane%4) and the next, per 8-column half."""
    row = thread_id // 4 + 8 * ((local_id % 4) // 2)
    col = 2 * (thread_id % 4) + local_id % 2 + 8 * (local_id // 4)
    return row, col

