"""The compiler's fragment layouts, for inspection and plots (tilelang.tools.plot_layout).

A Fragment says which thread holds each element of a register tile and at which local index.
"""
from .. import _ffi


class Fragment:
    def __init__(self, kind, params):
        self.kind, self.params = kind, list(params)
        shape, table, desc = _ffi.fragment_table(kind, list(params))
        self.shape = tuple(shape)
        self.desc = desc
        self._table = table

    def thread_local(self, *index):
        flat = 0
        for d, i in enumerate(index):
            flat = flat * self.shape[d] + i
        return tuple(self._table[flat])

    def value(self, origin=""):
        """This layout as an IR value, as LayoutInference records it: `with T.attr(buf, "tl.layout",
        layout.value()):` (pass tests write their inputs with it)."""
        return _ffi.fragment_value(self.kind, self.params, origin)

    def __repr__(self):
        return f"Fragment({self.desc})"


def mma_accumulator(M=16, N=8, warps_m=1, warps_n=1):
    """The mma.sync m16n8k16 accumulator layout of an M x N tile over a warps_m x warps_n warp grid."""
    return Fragment("mma_C", [M, N, warps_m, warps_n])


def striped(shape, threads, vec):
    """Elements dealt to threads in row-major chunks of `vec` (the free layout)."""
    return Fragment("striped", [*shape, threads, vec])


def replicated(shape, threads):
    """Every thread holds the whole tile."""
    return Fragment("replicated", [*shape, threads])


def mma_rows(M=16, warps_m=1, warps_n=1):
    """The row vector an mma accumulator reduces to (replica 0 shown)."""
    return Fragment("mma_rows", [M, warps_m, warps_n])
