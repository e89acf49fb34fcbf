"""T.* names TileLang programs use beyond the core tile language: what maps onto this compiler's IR
is implemented here; what does not raises TileLangUnsupportedError naming the construct (never a
silent no-op). README.md, "TileLang compatibility", lists both."""
import inspect

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .ast import DType, dtype_str
from .expr import Expr
from .expr import const as _const


def _unsupported(name, why, instead=None):
    msg = f"{name} is not supported by TileLang-C++ yet: {why}"
    if instead:
        msg += f"; {instead}"
    return TileLangUnsupportedError(msg)


# ---- expressions ------------------------------------------------------------------------------------------
def clamp(x, lo, hi):
    """T.clamp(x, lo, hi) = min(max(x, lo), hi)."""
    x = _const(x)
    lo = _const(lo, x.dtype) if not isinstance(lo, Expr) else lo
    hi = _const(hi, x.dtype) if not isinstance(hi, Expr) else hi
    return _ffi.binary("min", _ffi.binary("max", x, lo), hi)


def Cast(dtype, value):  # noqa: N802 - TileLang's (TVM's) spelling: T.Cast(dtype, value)
    return _ffi.cast(dtype_str(dtype), _const(value))


def assume(cond):
    """T.assume(cond): a fact the program promises. The compiler does not use it for simplification
    yet; dropping a promise never changes a correct program's results."""
    c = _const(cond)
    if c.dtype != "bool":
        raise TileLangTypeError(f"T.assume takes a condition, got a {c.dtype} expression")
    return None


def disable_warp_group_reg_alloc():
    """TileLang's opt-out of register reallocation between warp groups: the automatic warp
    specialisation on sm_90a (docs/warp_specialization.md) then emits no setmaxnreg. Elsewhere nothing
    reallocates registers, so it has no effect."""
    ctx = builder.current()
    if ctx is not None and ctx.kernels:
        ctx.kernels[-1].no_reg_alloc = True
    return None


class WsSpec:
    """What T.ws returns: the parser turns `with T.ws(i, ...):` into a block run by warp groups i, ... only."""

    def __init__(self, groups):
        self.groups = groups


def ws(*warp_group_idx):
    """`with T.ws(0):` / `with T.ws(1, 2):` (TileLang's T.ws, alias T.WarpSpecialize): the block runs only on
    the threads of the named warp groups (linear thread index // 128), e.g. a producer warp group issuing
    T.tma_copy and consumers waiting on mbarriers. Each warp group is one fiber in the emulator, so waits on
    arrivals of another warp group complete (docs/warp_specialization.md)."""
    ctx = builder.require_context("T.ws")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.ws must be used inside a `with T.Kernel(...)` block")
    groups = []
    for g in warp_group_idx:
        v = _ffi.const_int(g) if isinstance(g, Expr) else g
        if isinstance(v, (list, tuple)):
            groups.extend(v)
        else:
            groups.append(v)
    threads = 1
    for t in ctx.kernels[-1].threads:
        threads *= t
    n = threads // 128
    if not groups or any(not isinstance(g, int) or isinstance(g, bool) for g in groups):
        raise TileLangTypeError(f"T.ws takes constant warp-group indices, got {warp_group_idx!r}")
    if threads % 128 or any(not 0 <= g < n for g in groups):
        raise TileLangTypeError(f"T.ws{tuple(groups)}: the block has {threads} threads, i.e. {n} whole warp "
                                f"group(s) of 128 (indices 0..{n - 1})")
    return WsSpec(sorted(set(groups)))


WarpSpecialize = ws


class BufferAnnotation:
    """What T.SharedBuffer / T.FragmentBuffer / T.LocalBuffer(shape, dtype) return: the annotation of a
    T.macro parameter that receives an on-chip buffer. The macro's call checks the buffer against it."""

    def __init__(self, what, scopes, shape, dtype):
        self.what, self.scopes = what, scopes
        self.shape = [shape] if isinstance(shape, (int, Expr)) else list(shape)
        self.dtype = dtype_str(dtype)

    def check_argument(self, buf, macro, param):
        def dims(shape):
            return [_ffi.const_int(_const(d)) for d in shape]

        problems = []
        if buf.scope not in self.scopes:
            problems.append(f"is in {buf.scope} memory, not {' / '.join(self.scopes)}")
        if buf.dtype != self.dtype:
            problems.append(f"holds {buf.dtype}, not {self.dtype}")
        want, got = dims(self.shape), dims(buf.shape)
        if None not in want and None not in got and want != got:
            problems.append(f"has shape {tuple(got)}, not {tuple(want)}")
        if problems:
            raise TileLangTypeError(f"macro '{macro}': parameter '{param}' is annotated {self.what}"
                                    f"({tuple(want)}, {self.dtype!r}), but the buffer '{buf.name}' passed to it "
                                    + " and ".join(problems))


class _BufferAnnotationFactory:
    def __init__(self, what, scopes):
        self.what, self.scopes = what, scopes

    def __call__(self, shape, dtype="float32"):
        return BufferAnnotation(self.what, self.scopes, shape, dtype)

    def __getitem__(self, item):
        return self(*item)


SharedBuffer = _BufferAnnotationFactory("T.SharedBuffer", ("shared", "shared.dyn"))
FragmentBuffer = _BufferAnnotationFactory("T.FragmentBuffer", ("local.fragment",))
LocalBuffer = _BufferAnnotationFactory("T.LocalBuffer", ("local",))


def reinterpret(value, dtype=None):
    """T.reinterpret(value, dtype): the bits of `value` read as a `dtype` of the same width (a bit cast,
    as TVM's tir.reinterpret); T.cast converts the value instead. The older order
    T.reinterpret(dtype, value) is accepted too: a data type is never a value."""
    if _is_dtype(value) and dtype is not None and not _is_dtype(dtype):
        value, dtype = dtype, value
    if dtype is None or not _is_dtype(dtype):
        raise TileLangTypeError("T.reinterpret(value, dtype) needs a value and a data type")
    to = dtype_str(dtype)
    v = _const(value)
    from_bits, to_bits = _bits(v.dtype), _bits(to)
    if from_bits != to_bits:
        raise TileLangTypeError(f"T.reinterpret from {v.dtype} ({from_bits} bits) to {to} ({to_bits} bits): "
                                "a bit cast needs types of the same width")
    return _ffi.call(to, "tl.reinterpret", [v])


def _is_dtype(x):
    if isinstance(x, DType):
        return True
    return isinstance(x, str) and _ffi.valid_dtype(x)


def _bits(dtype):
    import re

    m = re.fullmatch(r"u?int(8|16|32|64)|float(16|32|64)|bfloat(16)|float8_e4m3fn|float8_e5m2", dtype)
    if not m:
        raise TileLangTypeError(f"T.reinterpret takes 8- to 64-bit integer and float scalars, not {dtype}")
    return int(next((g for g in m.groups() if g), 8))


def alloc_global(shape, dtype, scope="global"):
    """T.alloc_global(shape, dtype): global memory shared by all blocks of one launch (a workspace). The
    compiler turns it into a hidden trailing parameter; each call of the kernel allocates it zero-filled
    (HoistWorkspaces, src/transform/hoist_workspaces.h). Sizes may use the kernel's symbolic sizes."""
    if scope != "global":
        raise TileLangTypeError(f"T.alloc_global: scope must be 'global', got {scope!r}")
    ctx = builder.require_context("T.alloc_global")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.alloc_global must be called inside a `with T.Kernel(...)` block")
    dims = _dims(shape, "T.alloc_global")
    name = ctx.pending_name or "workspace"
    buf = _ffi.buffer(name, dtype_str(dtype), dims, "global", ctx.span, None, 0)
    ctx.kernels[-1].allocs.append(buf)
    return buf


def get_thread_binding(dim=0):
    """T.get_thread_binding(dim): the thread's index along dim of T.Kernel(threads=...) (threadIdx.x/y/z).
    Statements that use it run once per thread (outside T.Parallel; see docs/thread_ir.md)."""
    ctx = builder.require_context("T.get_thread_binding")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.get_thread_binding must be called inside a `with T.Kernel(...)` block")
    threads = ctx.kernels[-1].threads
    if not isinstance(dim, int) or not 0 <= dim < len(threads):
        raise TileLangTypeError(f"T.get_thread_binding({dim!r}): the kernel has {len(threads)} thread "
                                f"dimension(s) {tuple(threads)}")
    idx = _ffi.call("int32", "tl.thread_idx", [])
    below = 1
    for t in threads[:dim]:
        below *= t
    if below > 1:
        idx = _ffi.binary("floordiv", idx, _const(below))
    if dim < len(threads) - 1:
        idx = _ffi.binary("floormod", idx, _const(threads[dim]))
    return idx


def get_block_binding(dim=0):
    """T.get_block_binding(dim): the block's index along dim of T.Kernel's grid (blockIdx.x/y/z), the var
    `with T.Kernel(...) as (bx, by)` binds."""
    ctx = builder.require_context("T.get_block_binding")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.get_block_binding must be called inside a `with T.Kernel(...)` block")
    blocks = ctx.kernels[-1].block_vars
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim < len(blocks):
        raise TileLangTypeError(f"T.get_block_binding({dim!r}): the kernel has {len(blocks)} grid dimension(s)")
    return blocks[dim]


def get_block_bindings():
    ctx = builder.require_context("T.get_block_bindings")
    return list(ctx.kernels[-1].block_vars) if ctx.kernels else []


def get_thread_bindings():
    ctx = builder.require_context("T.get_thread_bindings")
    n = len(ctx.kernels[-1].threads) if ctx.kernels else 1
    return [get_thread_binding(d) for d in range(n)]


_THREAD_TAGS = {"threadIdx.x": 0, "threadIdx.y": 1, "threadIdx.z": 2}


def thread_binding(start, stop=None, thread="threadIdx.x", annotations=None):
    """`for tx in T.thread_binding(128, thread="threadIdx.x"):` -- the loop is the block's threads: its var is
    the thread index (start + index), and a loop shorter than the thread count runs on the first threads."""
    from .ast import LoopSpec

    if stop is None:
        start, stop = 0, start
    if thread not in _THREAD_TAGS:
        raise TileLangTypeError(f"T.thread_binding: thread must be one of {sorted(_THREAD_TAGS)}, got {thread!r} "
                                "(block indices come from T.Kernel)")
    if annotations:
        raise TileLangTypeError("T.thread_binding: annotations are not supported")
    ctx = builder.require_context("T.thread_binding")
    dim = _THREAD_TAGS[thread]
    threads = ctx.kernels[-1].threads if ctx.kernels else []
    extent = _ffi.const_int(_ffi.simplify_expr(_const(stop) - _const(start)))
    if dim >= len(threads) or not isinstance(extent, int) or extent > threads[dim]:
        raise TileLangTypeError(f"T.thread_binding over {extent} {thread} threads, but the kernel has threads="
                                f"{tuple(threads)}")
    spec = LoopSpec("thread_binding", [(_const(start), _const(extent))])
    spec.thread_dim = dim
    spec.thread_count = threads[dim]
    return spec


def sync_threads(*args, **kwargs):
    """T.sync_threads(): a barrier for every thread of the block (__syncthreads()); the compiler still
    inserts the barriers its shared-memory analysis needs."""
    if args or kwargs:
        raise TileLangTypeError("T.sync_threads() takes no arguments (named barriers are not supported)")
    return _ffi.evaluate(_ffi.call("void", "tl.syncthreads", []), builder.span())


def _dims(shape, what):
    """A shape of positive ints and size expressions, as IR expressions."""
    if isinstance(shape, (int, Expr)):
        shape = (shape,)
    dims = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, Expr)):
            raise TileLangTypeError(f"{what}: a dimension must be an int or a size expression, not {d!r}")
        if isinstance(d, int) and d <= 0:
            raise TileLangTypeError(f"{what}: dimensions must be positive, got {d}")
        dims.append(_const(d))
    return dims


def make_view(src, shape, dtype, what):
    """A buffer over `src`'s storage with its own shape and dtype (ResolveBufferViews rewrites its
    accesses into accesses of the owner; a dtype must have the owner's width)."""
    if isinstance(src, _ffi.BufferStorage):
        src = src.buffer
    if not isinstance(src, _ffi.Buffer):
        raise TileLangTypeError(f"{what} takes a buffer, not {type(src).__name__}")
    ctx = builder.require_context(what)
    if not ctx.kernels:
        raise TileLangSyntaxError(f"{what} must be called inside a `with T.Kernel(...)` block")
    dims = _dims(src.shape if shape is None else shape, what)
    name = ctx.pending_name or src.name + "_view"
    buf = _ffi.buffer(name, dtype_str(dtype if dtype is not None else src.dtype), dims, src.scope, ctx.span, src, 0)
    ctx.kernels[-1].allocs.append(buf)
    return buf


def _elements(shape):
    n = _const(1)
    for d in shape:
        n = n * _const(d)
    return _ffi.simplify_expr(n)


def reshape(src, shape):
    """T.reshape(buf, shape): the same elements in row-major order with another shape (a view: reads
    and writes go to `buf`). The element counts must be equal."""
    if isinstance(src, _ffi.Buffer) and not isinstance(shape, (int, Expr)):
        have, want = _ffi.const_int(_elements(src.shape)), _ffi.const_int(_elements(shape))
        if isinstance(have, int) and isinstance(want, int) and have != want:
            raise TileLangTypeError(f"T.reshape of '{src.name}' {tuple(src.shape)} ({have} elements) to "
                                    f"{tuple(shape)} ({want} elements): the element counts must be equal")
    return make_view(src, shape, None, "T.reshape")


def view(src, shape=None, dtype=None):
    """T.view(buf, shape=None, dtype=None): `buf`'s storage seen with another shape and/or a dtype of the
    same width (a bit cast, as T.reinterpret)."""
    return make_view(src, shape, dtype, "T.view")


class PtrParam:
    """A `p: T.ptr` parameter while its function is parsed: T.make_tensor(p, shape, dtype) gives it its
    tensor (the parameter becomes a tensor of that shape and dtype; the shape may use scalar parameters)."""

    def __init__(self, name, span):
        self.name, self.span, self.buffer = name, span, None


def ptr(dtype=None, storage_scope="global", *, is_size_var=False):
    """T.ptr: the annotation of a pointer parameter (`a_ptr: T.ptr`); T.make_tensor gives it a shape."""
    if storage_scope != "global" or is_size_var:
        raise TileLangTypeError("T.ptr: only global pointers to tensors are supported")
    return ptr


def make_tensor(ptr_param, shape, dtype="float32", strides=None, elem_offset=None, scope="global"):
    """T.make_tensor(a_ptr, shape, dtype): the tensor behind a T.ptr parameter; T.make_tensor(table[i], shape,
    dtype): the tensor at an address read from a pointer table (`table: T.Tensor([n], T.ptr)`), bound for the
    rest of the block (`A = T.make_tensor(...)`)."""
    if strides is not None or elem_offset not in (None, 0) or scope != "global":
        raise _unsupported("T.make_tensor(..., strides=/elem_offset=/scope=)", "parameters are dense row-major tensors")
    if isinstance(ptr_param, _ffi.Expr):
        return _bound_tensor(ptr_param, shape, dtype)
    if not isinstance(ptr_param, PtrParam):
        raise TileLangTypeError(f"T.make_tensor takes a T.ptr parameter or an address read from a pointer table "
                                f"(T.Tensor([n], T.ptr)), not {type(ptr_param).__name__}")
    if ptr_param.buffer is not None:
        raise _unsupported(f"a second T.make_tensor of '{ptr_param.name}'", "a pointer parameter has one tensor",
                           f"view it with T.view / T.reshape of the first")
    ctx = builder.require_context("T.make_tensor")
    name = ctx.pending_name or ptr_param.name
    dims = []
    for d in _dims(shape, "T.make_tensor"):
        # A dimension that is a scalar parameter (m in `T.make_tensor(a_ptr, (m, k), dtype)`) becomes a size
        # bound from the tensor; the call checks that the scalar passed for m equals it.
        if isinstance(d, _ffi.Var) and ctx.scalar_params.get(d.name) is not None:
            if d.name not in ctx.size_vars:
                ctx.size_vars[d.name] = _ffi.var(d.name, d.dtype)
            d = ctx.size_vars[d.name]
        dims.append(d)
    ptr_param.buffer = _ffi.buffer(name, dtype_str(dtype), dims, "global", ctx.span, None, 0)
    return ptr_param.buffer


def _bound_tensor(addr, shape, dtype):
    """A global tensor at a run-time address (an int64 element of a pointer table): the parser wraps the rest of
    the block in `T.attr(A, "tl.buffer_bind", addr)` (builder.BuildContext.bound_tensors)."""
    ctx = builder.require_context("T.make_tensor")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.make_tensor of a table address must be inside a `with T.Kernel(...)` block")
    if ctx.pending_name is None:
        raise TileLangSyntaxError("assign T.make_tensor(table[i], shape, dtype) to a name: `A = T.make_tensor(...)`")
    if addr.dtype not in ("int64", "uint64"):
        raise TileLangTypeError(f"T.make_tensor takes a 64-bit address (an element of a T.Tensor([n], T.ptr) "
                                f"table), not a {addr.dtype} value")
    dims = _dims(shape, "T.make_tensor")
    buf = _ffi.buffer(ctx.pending_name, dtype_str(dtype), dims, "global", ctx.span, None, 0)
    ctx.bound_tensors.append((buf, addr))
    return buf


def c2d_im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad, eviction_policy=None):
    """T.c2d_im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): the im2col tile of a 2-D
    convolution. img is (N, H, W, C) in global memory, col a (block_M, block_K) tile; col[i, j] is the
    input element that row m = nhw_step * block_M + i (an output pixel n, oh, ow) and column
    k = c_step * block_K + j (a filter tap kh, kw and a channel c) of the im2col matrix read, or 0 in the
    padding. Lowered to a T.Parallel gather on every target (TileLang uses TMA im2col on Hopper)."""
    if eviction_policy is not None:
        raise TileLangTypeError("T.c2d_im2col: eviction_policy is not supported")
    if not isinstance(img, _ffi.Buffer) or len(img.shape) != 4 or img.scope != "global":
        raise TileLangTypeError("T.c2d_im2col: img must be an (N, H, W, C) tensor")
    if not isinstance(col, _ffi.Buffer) or len(col.shape) != 2 or col.scope == "global":
        raise TileLangTypeError("T.c2d_im2col: col must be a 2-D shared or fragment tile")
    for name, v in (("kernel", kernel), ("stride", stride), ("dilation", dilation), ("pad", pad)):
        if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name == "pad" else 1):
            raise TileLangTypeError(f"T.c2d_im2col: {name} must be a {'non-negative' if name == 'pad' else 'positive'} "
                                    f"int, got {v!r}")
    b = _ffi.binary
    N, H, W, C = (_const(d) for d in img.shape)
    K, S, D, P = kernel, stride, dilation, pad
    OH = b("add", b("floordiv", _const(-D * (K - 1) - 1 + 2 * P) + H, _const(S)), _const(1))
    OW = b("add", b("floordiv", _const(-D * (K - 1) - 1 + 2 * P) + W, _const(S)), _const(1))
    bm, bk = col.shape
    i, j = _ffi.var("i", "int32"), _ffi.var("j", "int32")
    k = b("add", b("mul", _const(c_step), bk), j)
    m = b("add", b("mul", _const(nhw_step), bm), i)
    ohw = b("mul", OH, OW)
    h = b("sub", b("add", b("mul", b("floordiv", b("floormod", m, ohw), OW), _const(S)),
                   b("mul", b("floordiv", k, b("mul", _const(K), C)), _const(D))), _const(P))
    w = b("sub", b("add", b("mul", b("floormod", m, OW), _const(S)),
                   b("mul", b("floormod", b("floordiv", k, C), _const(K)), _const(D))), _const(P))
    inside = b("and", b("and", b("ge", h, _const(0)), b("ge", w, _const(0))), b("and", b("lt", h, H), b("lt", w, W)))
    value = _ffi.select(inside, _ffi.load(img, [b("floordiv", m, ohw), h, w, b("floormod", k, C)]),
                        _const(0, img.dtype))
    if col.dtype != img.dtype:
        value = _ffi.cast(col.dtype, value)
    span = builder.span()
    body = _ffi.store(col, value, [i, j], span)
    return _ffi.for_(i, _const(0), bm, "parallel", _ffi.for_(j, _const(0), bk, "parallel", body, {}, span), {}, span)


im2col = c2d_im2col  # the same op under its short name


def access_ptr(*args, **kwargs):
    raise _unsupported("T.access_ptr", "the IR has no raw pointers")


def call_extern(*args, **kwargs):
    raise _unsupported("T.call_extern", "calls into user C/CUDA functions are not supported")


def _hopper_only(name):
    def f(*args, **kwargs):
        raise _unsupported(f"T.{name}", "Hopper-specific (TMA, mbarriers, warp specialisation) and not implemented",
                           "write the kernel with T.copy / T.gemm / T.Pipelined; the compiler picks the instructions")

    f.__name__ = name
    return f


HOPPER_ONLY = ["ClusterKernel", "copy_cluster", "mma_gemm_blockscaled"]


# ---- macros ----------------------------------------------------------------------------------------------
class Macro:
    """@T.macro: a function whose body is spliced into the kernel where it is called (parsed in the
    caller's context with its parameters bound to the arguments). A macro used as a value must have
    `return <expr>` as its only statement after parse-time work."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        ctx = builder.current()
        if ctx is None:
            raise TileLangSyntaxError(f"macro '{self.__name__}' can only be called inside a kernel")
        from .macro_expand import expand

        return expand(self, ctx, args, kwargs)


def macro(fn=None, hygienic=True, **options):
    """@T.macro / @T.macro(hygienic=...). Macros are hygienic here: names in the body resolve where the macro is
    defined (its globals and closure), never in the caller's kernel."""
    if options:
        raise TileLangTypeError(f"T.macro() got unexpected options {sorted(options)}; it takes hygienic=")
    if not hygienic:
        from ..log import warn

        warn("T.macro(hygienic=False) is accepted but not implemented: names in the macro resolve where it "
             "is defined (a name only the caller has is an error at its use)")
    if fn is None:
        return lambda f: Macro(f)
    if not inspect.isfunction(fn):
        raise TileLangTypeError("@T.macro decorates a function")
    return Macro(fn)


# ---- data types -------------------------------------------------------------------------------------------
class _Unsupported_DType(DType):
    """A dtype name TileLang has and this compiler does not: any use says so."""

    def __init__(self, name, why):
        self.name = name
        self.why = why

    def __call__(self, *a, **k):
        raise _unsupported(f"T.{self.name}", self.why)


DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
                 "short": "int16", "uint": "uint32", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32",
                 "float8_e4m3": "float8_e4m3fn",
                 # TileLang's tfloat32 is float32 storage whose T.gemm runs on tf32 tensor cores: here every float32
                 # T.gemm on CUDA does (docs/tf32.md), so it is float32 (the CPU target multiplies exactly)
                 "tfloat32": "float32"}
UNSUPPORTED_DTYPES = {
    "float8_e4m3fnuz": "the fnuz fp8 variants are not implemented; use T.float8_e4m3fn",
    "float8_e5m2fnuz": "the fnuz fp8 variants are not implemented; use T.float8_e5m2",
    "float4_e2m1fn": "fp4 is not implemented",
}
