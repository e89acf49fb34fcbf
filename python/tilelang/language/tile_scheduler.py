"""T.PersistentTileScheduler: the tile order of a persistent kernel (TileLang's scheduler object). A grid of
num_m_tiles x num_n_tiles tiles is numbered linearly and worker w (a block, or a cluster) takes the numbers
w, w + num_workers, w + 2 num_workers, ... Each number decodes to a tile: with column_major the M index runs
fastest, and with swizzle_size > 1 the fast axis is swept for a panel of swizzle_size tiles of the slow axis
at a time (a narrower last panel where they do not divide); cluster_size > 1 schedules cluster rows along M.

State (stateful=True) lives in T.alloc_var registers of the kernel: `init(worker)`, `next_tile()` and
`valid()` drive a `while` loop (the registers are named `<name>_m_idx`, ... after `name=`, else after the variable
the scheduler is assigned to); `m_idx`, `n_idx`, `linear_idx` and `current_iter` read it. `coord(tile)`
decodes a number without state. Methods that update the state return the statements that do it, so they are
written as statements: `sched.init(bx)`, `sched.next_tile()`."""
from .. import _ffi
from ..errors import TileLangTypeError
from . import builder
from .allocate import alloc_var
from .expr import Expr, const
from .math_intrinsics import ceildiv
from .math_intrinsics import max as _max
from .math_intrinsics import min as _min


def _int(v):
    return v if isinstance(v, Expr) else const(int(v))


class PersistentTileScheduler:
    def __init__(self, num_m_tiles, num_n_tiles, num_workers=None, swizzle_size=1, column_major=True,
                 cluster_size=1, stateful=True, name=None):
        for what, v in (("swizzle_size", swizzle_size), ("cluster_size", cluster_size)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise TileLangTypeError(f"T.PersistentTileScheduler({what}={v!r}): a positive Python int")
        if num_workers is None:
            from ..carver.arch import driver

            num_workers = max(1, driver.get_num_sms() // cluster_size)
        self.num_workers, self.swizzle_size, self.cluster_size = num_workers, swizzle_size, cluster_size
        self.column_major, self.stateful, self.name = bool(column_major), bool(stateful), name
        rows = ceildiv(_int(num_m_tiles), cluster_size) if cluster_size > 1 else _int(num_m_tiles)
        cols = _int(num_n_tiles)
        self._tiles = rows * cols
        self._fast, self._slow = (rows, cols) if self.column_major else (cols, rows)
        if self.stateful:  # registers named `<name>_m_idx` ... (name: the given one, else the assigned variable's)
            ctx = builder.require_context("T.PersistentTileScheduler")
            saved = ctx.pending_name
            prefix = name or saved or "sched"
            regs = []
            try:
                for field in ("m_idx", "n_idx", "linear_idx", "current_iter"):
                    ctx.pending_name = f"{prefix}_{field}"
                    regs.append(alloc_var("int32"))
            finally:
                ctx.pending_name = saved
            self._m, self._n, self._linear, self._iter = regs

    # -- the decode ------------------------------------------------------------------------------------------
    def coord(self, tile_id):
        """(m, n) of linear tile number `tile_id` (m counts cluster rows when cluster_size > 1)."""
        t = _int(tile_id)
        per_panel = self._fast * self.swizzle_size
        panel = t // per_panel
        first = panel * self.swizzle_size  # the panel's first index along the slow axis
        width = _max(const(1), _min(const(self.swizzle_size), self._slow - first))
        within = t - panel * per_panel
        fast, slow = within // width, first + within % width
        return (fast, slow) if self.column_major else (slow, fast)

    # -- the state -------------------------------------------------------------------------------------------
    def _state(self, what):
        if not self.stateful:
            raise TileLangTypeError(f"T.PersistentTileScheduler(stateful=False) has no {what}; decode tile numbers "
                                    "with coord(tile_id)")

    @staticmethod
    def _get(buf):
        return _ffi.load(buf, [const(0)])

    def _read(field, attr):  # noqa: N805 -- a property factory used in the class body
        def get(self):
            self._state(field)
            return self._get(getattr(self, attr))
        return property(get, doc=f"The worker's {field} (a register read).")

    m_idx = _read("m_idx", "_m")
    n_idx = _read("n_idx", "_n")
    linear_idx = _read("linear_idx", "_linear")
    current_iter = _read("current_iter", "_iter")
    del _read

    def valid(self):
        """Whether the worker's current tile number is inside the grid."""
        self._state("valid()")
        return self._get(self._linear) < self._tiles

    def _set(self, updates):
        sp = builder.span()
        return _ffi.seq([_ffi.store(b, v if isinstance(v, Expr) else const(v), [const(0)], sp) for b, v in updates],
                        sp)

    def _goto(self, linear, it):
        m, n = self.coord(linear)
        # m and n first: the new values are expressions of the old state, read before it is overwritten
        return [(self._m, m), (self._n, n), (self._iter, it), (self._linear, linear)]

    def init(self, worker_id):
        """The statements that put worker `worker_id` on its first tile."""
        self._state("init()")
        return self._set(self._goto(_int(worker_id), 0))

    def next_tile(self):
        """The statements that move the worker num_workers tiles on."""
        self._state("next_tile()")
        return self._set(self._goto(self._get(self._linear) + _int(self.num_workers), self._get(self._iter) + 1))
