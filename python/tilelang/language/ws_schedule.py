"""TileLang's warp-specialisation schedule (T.annotate_ws_schedule, T.WSSchedule, T.WSRole, T.WSPipeline,
T.WSSync, T.WSScope, T.WSID, T.ws_op): a kernel written as one straight-line program, plus a description of
how to split it over warp roles. The schedule names the kernel's ops by stable ids (`annotations={T.WSID: id}`
on tile ops and loops, `with T.ws_op(id):` around other statements); the compiler turns it into the explicit
form (a branch per role, multi-versioned buffers, full/empty mbarrier pairs) on targets with warp
specialisation, and runs the kernel as written elsewhere (with a warning): the schedule never changes what the
kernel computes. docs/warp_specialization.md, "Schedules"."""
import enum

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .expr import Expr, const as _const

__all__ = ["WSID", "WSSyncKind", "WSRole", "WSPipeline", "WSOpRef", "WSSync", "WSScope", "WSSchedule",
           "annotate_ws_schedule", "ws_op", "WsOpSpec", "with_ws_id"]

WSID = "tl.ws_op_id"  # the annotation key that names an op or a loop for the schedule


def _name(v, what):
    if not isinstance(v, str) or not v:
        raise TileLangTypeError(f"{what} is a non-empty string, got {v!r}")
    return v


def _int(v, what, lo=None):
    n = _ffi.const_int(v) if isinstance(v, Expr) else v
    if not isinstance(n, int) or isinstance(n, bool) or (lo is not None and n < lo):
        raise TileLangTypeError(f"{what} is a constant integer" + (f" >= {lo}" if lo is not None else "")
                                + f", got {v!r}")
    return n


class WSSyncKind(enum.IntEnum):
    """Which side of a pipeline a sync is: the producer waits for "empty" (ACQUIRE) and signals "full"
    (COMMIT); the consumer waits for "full" (WAIT) and signals "empty" (RELEASE)."""
    PRODUCER_ACQUIRE = 0
    PRODUCER_COMMIT = 1
    CONSUMER_WAIT = 2
    CONSUMER_RELEASE = 3


class WSRole:
    """Warps [warps_lo, warps_hi) with one duty; max_nreg: their setmaxnreg budget (0: left alone)."""

    def __init__(self, name, *, warps_lo, warps_hi, max_nreg=0):
        self.name = _name(name, "T.WSRole's name")
        self.warps_lo = _int(warps_lo, f"T.WSRole({name!r}) warps_lo", 0)
        self.warps_hi = _int(warps_hi, f"T.WSRole({name!r}) warps_hi", 0)
        self.max_nreg = _int(max_nreg, f"T.WSRole({name!r}) max_nreg", 0)
        if self.warps_hi <= self.warps_lo:
            raise TileLangTypeError(f"T.WSRole({name!r}): warps [{self.warps_lo}, {self.warps_hi}) is empty")
        if self.max_nreg and (not 24 <= self.max_nreg <= 256 or self.max_nreg % 8):
            raise TileLangTypeError(f"T.WSRole({name!r}): max_nreg is 0 or a multiple of 8 from 24 to 256 "
                                    f"(setmaxnreg), got {self.max_nreg}")


class WSPipeline:
    """A full/empty mbarrier pair per version protecting `depth` versions of each of `buffers`."""

    def __init__(self, name, buffers, depth):
        self.name = _name(name, "T.WSPipeline's name")
        self.buffers = list(buffers) if isinstance(buffers, (list, tuple)) else [buffers]
        self.depth = _int(depth, f"T.WSPipeline({name!r}) depth", 1)
        if not self.buffers:
            raise TileLangTypeError(f"T.WSPipeline({name!r}) protects no buffer")
        for b in self.buffers:
            if not isinstance(b, _ffi.Buffer) or b.scope not in ("shared", "shared.dyn", "shared.tmem"):
                raise TileLangTypeError(f"T.WSPipeline({name!r}) protects shared-memory buffers (T.alloc_shared) "
                                        f"or tensor memory (T.alloc_tmem), got {getattr(b, 'name', b)!r}")


class WSOpRef:
    """A place in a role's program for the op or loop scope named `id`."""

    def __init__(self, id):  # noqa: A002
        self.id = _name(id, "a T.WSOpRef id")


class WSSync:
    """A pipeline synchronisation point at a software-pipeline stage (the ops between an acquire and its commit,
    or a wait and its release, run `stage` iterations behind the loop's counter)."""

    def __init__(self, kind, pipeline, stage=0):
        self.kind = WSSyncKind(kind)
        self.pipeline = _name(pipeline, "T.WSSync's pipeline")
        self.stage = _int(stage, "T.WSSync's stage", 0)

    @classmethod
    def producer_acquire(cls, pipeline, stage=0):
        return cls(WSSyncKind.PRODUCER_ACQUIRE, pipeline, stage)

    @classmethod
    def producer_commit(cls, pipeline, stage=0):
        return cls(WSSyncKind.PRODUCER_COMMIT, pipeline, stage)

    @classmethod
    def consumer_wait(cls, pipeline, stage=0):
        return cls(WSSyncKind.CONSUMER_WAIT, pipeline, stage)

    @classmethod
    def consumer_release(cls, pipeline, stage=0):
        return cls(WSSyncKind.CONSUMER_RELEASE, pipeline, stage)


class WSScope:
    """The per-role programs of one loop (named by its WSID) or of the kernel's root (WSScope.ROOT)."""
    ROOT = "tl.ws_scope_root"

    def __init__(self, id, bodies):  # noqa: A002
        self.id = _name(id, "a T.WSScope id")
        if not isinstance(bodies, dict):
            raise TileLangTypeError(f"T.WSScope({id!r}, bodies): bodies is a dict role name -> list of steps")
        self.bodies = {}
        for role, steps in bodies.items():
            _name(role, f"a role name in T.WSScope({id!r})")
            out = []
            for s in steps:
                if isinstance(s, str):
                    s = WSOpRef(s)
                if not isinstance(s, (WSOpRef, WSSync)):
                    raise TileLangTypeError(f"T.WSScope({id!r}) role {role!r}: a step is an op id (str), a T.WSOpRef "
                                            f"or a T.WSSync, got {s!r}")
                out.append(s)
            self.bodies[role] = out


class WSSchedule:
    """The whole schedule: the block's warp count (it replaces T.Kernel's threads), roles, pipelines, scopes."""

    def __init__(self, num_warps, roles, pipelines, scopes):
        self.num_warps = _int(num_warps, "T.WSSchedule num_warps", 1)
        if self.num_warps % 4:
            raise TileLangTypeError(f"T.WSSchedule: num_warps is a multiple of 4 (setmaxnreg and wgmma work on whole "
                                    f"warp groups), got {self.num_warps}")
        self.roles, self.pipelines, self.scopes = list(roles), list(pipelines), list(scopes)
        for what, items, cls in (("roles", self.roles, WSRole), ("pipelines", self.pipelines, WSPipeline),
                                 ("scopes", self.scopes, WSScope)):
            for x in items:
                if not isinstance(x, cls):
                    raise TileLangTypeError(f"T.WSSchedule {what} are T.{cls.__name__} objects, got {x!r}")
            names = [x.id if cls is WSScope else x.name for x in items]
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise TileLangTypeError(f"T.WSSchedule: two {what} are named {dup[0]!r}")
        roles = sorted(self.roles, key=lambda r: r.warps_lo)
        for a, b in zip(roles, roles[1:]):
            if a.warps_hi > b.warps_lo:
                raise TileLangTypeError(f"T.WSSchedule: roles {a.name!r} (warps {a.warps_lo}..{a.warps_hi - 1}) and "
                                        f"{b.name!r} (warps {b.warps_lo}..{b.warps_hi - 1}) overlap")
        for r in self.roles:
            if r.warps_hi > self.num_warps:
                raise TileLangTypeError(f"T.WSSchedule: role {r.name!r} ends at warp {r.warps_hi - 1} but the block "
                                        f"has {self.num_warps} warps")
        role_names = {r.name for r in self.roles}
        pipe_names = {p.name for p in self.pipelines}
        for s in self.scopes:
            for role, steps in s.bodies.items():
                if role not in role_names:
                    raise TileLangTypeError(f"T.WSScope({s.id!r}) has a program for role {role!r}, which is not one "
                                            f"of the schedule's roles {sorted(role_names)}")
                for st in steps:
                    if isinstance(st, WSSync) and st.pipeline not in pipe_names:
                        raise TileLangTypeError(f"T.WSScope({s.id!r}) role {role!r}: no pipeline is named "
                                                f"{st.pipeline!r} (the pipelines: {sorted(pipe_names)})")
        if not any(s.id == WSScope.ROOT for s in self.scopes):
            raise TileLangTypeError("T.WSSchedule has no root scope: add T.WSScope(T.WSScope.ROOT, {role: [...]})")

    def to_ir(self):
        """The schedule as IR values: one `tl.ws_schedule` call (roles and scopes; strings as StringImm) and, per
        pipeline buffer, (buffer, `tl.ws_pipeline(name, depth)`)."""
        s = _ffi.string_imm

        def call(op, args):
            return _ffi.call("handle", op, args)

        roles = [call("tl.ws_role", [s(r.name), _const(r.warps_lo), _const(r.warps_hi), _const(r.max_nreg)])
                 for r in self.roles]
        scopes = []
        for sc in self.scopes:
            bodies = []
            for role, steps in sc.bodies.items():
                ir = [s(x.id) if isinstance(x, WSOpRef) else
                      call("tl.ws_sync", [_const(int(x.kind)), s(x.pipeline), _const(x.stage)]) for x in steps]
                bodies.append(call("tl.ws_body", [s(role)] + ir))
            scopes.append(call("tl.ws_scope", [s(sc.id)] + bodies))
        sched = call("tl.ws_schedule", [_const(self.num_warps), call("list", roles), call("list", scopes)])
        pipes = [(b, call("tl.ws_pipeline", [s(p.name), _const(p.depth)])) for p in self.pipelines for b in p.buffers]
        return sched, pipes


def annotate_ws_schedule(schedule):
    """Attaches a T.WSSchedule to the kernel (once, inside `with T.Kernel`, after the buffers it names)."""
    if not isinstance(schedule, WSSchedule):
        raise TileLangTypeError(f"T.annotate_ws_schedule takes a T.WSSchedule, got {type(schedule).__name__}")
    ctx = builder.require_context("T.annotate_ws_schedule")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.annotate_ws_schedule must be called inside a `with T.Kernel(...)` block")
    frame = ctx.kernels[-1]
    if getattr(frame, "ws_schedule", None) is not None:
        raise TileLangSyntaxError("T.annotate_ws_schedule: this kernel already has a schedule")
    for p in schedule.pipelines:
        for b in p.buffers:
            if not any(a is b for a in frame.allocs):
                raise TileLangTypeError(f"T.WSPipeline({p.name!r}): '{b.name}' is not allocated in this kernel")
    frame.ws_schedule = (schedule, builder.span())
    return None


class WsOpSpec:
    """`with T.ws_op(id):` -- the statements inside are one op named `id` for the schedule (a `let` inside stays
    visible after the block, as in Python)."""

    def __init__(self, op_id):
        self.op_id = _name(op_id, "T.ws_op's id")


def ws_op(op_id):
    return WsOpSpec(op_id)


def with_ws_id(stmt, annotations, what):
    """A tile op's `annotations=`: {T.WSID: id} names it for the schedule; other keys are not implemented."""
    if not annotations:
        return stmt
    if not isinstance(annotations, dict):
        raise TileLangTypeError(f"{what}(annotations=...) takes a dict")
    other = sorted(str(k) for k in annotations if k != WSID)
    if other:
        raise TileLangUnsupportedError(f"{what}(annotations=...): keys {other} are not implemented (only T.WSID, the "
                                       "op's id for T.annotate_ws_schedule)")
    if WSID not in annotations:
        return stmt
    op_id = _name(annotations[WSID], f"{what}'s T.WSID")
    return _ffi.attr_stmt(None, WSID, _ffi.string_imm(op_id), stmt, builder.span())
