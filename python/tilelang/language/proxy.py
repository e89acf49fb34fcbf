"""Buffers and tensors as the program names them: the parameter annotations T.Tensor / T.Buffer, the
macro-parameter annotations T.SharedBuffer / T.FragmentBuffer / T.LocalBuffer, pointer parameters (T.ptr,
T.make_tensor) and views of a buffer's storage (make_view, behind T.view / T.reshape / T.Tensor(data=))."""
import sys

from .. import _ffi
from ..errors import TileLangError, TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError
from . import builder
from .dtypes import dtype_str
from .expr import Expr
from .expr import const as _const
from .utils import _dims, _unsupported


class TensorSpec:
    """The annotation T.Buffer(shape, dtype) / T.Tensor(shape, dtype) of a kernel parameter."""

    def __init__(self, shape, dtype="float32", scope="global"):
        if isinstance(shape, (int, _ffi.Expr)):
            shape = (shape,)
        try:
            self.shape = tuple(shape)
        except TypeError:
            raise TileLangTypeError(f"a tensor shape must be a tuple of sizes, not {type(shape).__name__}") from None
        for d in self.shape:
            if not isinstance(d, (int, _ffi.Expr)) or (isinstance(d, int) and d < 0):
                raise TileLangTypeError(f"tensor dimension {d!r} must be a non-negative int or a T.dynamic symbol")
        # T.Tensor([n], T.ptr): a table of device addresses (int64 elements, as torch's data_ptr() values);
        # T.make_tensor(table[i], shape, dtype) gives the tensor at one of them
        self.dtype = "int64" if dtype is ptr else dtype_str(dtype)
        self.scope = scope


class TensorFactory:
    """T.Tensor / T.Buffer: T.Tensor((M, N), "float16") or T.Tensor[(M, N), "float16"]."""

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 **kwargs):
        if data is not None:
            if strides is not None or elem_offset not in (None, 0) or scope != "global" or kwargs:
                raise TileLangUnsupportedError("T.Tensor(..., data=...) views take a shape and a dtype only "
                                               "(no strides=, elem_offset=, scope=)")
            return make_view(data, shape, dtype, "T.Tensor(..., data=...)")
        if strides is not None or elem_offset not in (None, 0):
            raise TileLangUnsupportedError("T.Tensor(..., strides=/elem_offset=) is not supported: parameters are "
                                           "dense row-major tensors")
        if scope != "global" or kwargs:
            raise TileLangUnsupportedError(f"T.Tensor(...) got unsupported arguments "
                                           f"{sorted(list(kwargs) + (['scope'] if scope != 'global' else []))}")
        return self._spec(shape, dtype)

    def __getitem__(self, item):
        return self._spec(*item)

    @staticmethod
    def _spec(shape, dtype="float32"):
        try:
            return TensorSpec(shape, dtype)
        except TileLangError as e:
            if e.span is not None or builder.current() is not None:
                raise  # inside the parser, which adds the location
            # Python evaluates parameter annotations before @T.prim_func sees the function:
            # point at the annotation in the user's source.
            raise builder.error_at(builder.caller_span(sys._getframe(2)), str(e), type(e)) from None


Buffer = TensorFactory()
Tensor = TensorFactory()


class StridedTensorSpec(TensorSpec):
    """T.StridedTensor(shape, strides, dtype): a parameter that may be a strided view (e.g. a column slice). The
    kernel addresses it as a dense row-major tensor of `shape`; at each call the tensor's strides (in elements)
    are checked against `strides` (ints must match, a T.dynamic symbol is bound), and a tensor that is not
    contiguous is copied into a contiguous one for the launch and back afterwards (a TileLangPerformanceWarning
    says so at the first such call)."""

    def __init__(self, shape, strides, dtype="float32"):
        super().__init__(shape, dtype)
        if isinstance(strides, (int, _ffi.Expr)):
            strides = (strides,)
        try:
            strides = tuple(strides)
        except TypeError:
            raise TileLangTypeError(f"T.StridedTensor strides must be a tuple, not {type(strides).__name__}") from None
        if len(strides) != len(self.shape):
            raise TileLangTypeError(f"T.StridedTensor has {len(self.shape)} dimensions but {len(strides)} strides")
        for st in strides:
            if isinstance(st, bool) or not isinstance(st, (int, _ffi.Expr)) or (isinstance(st, int) and st < 0):
                raise TileLangTypeError(f"T.StridedTensor stride {st!r} must be a non-negative int or a T.dynamic "
                                        "symbol")
            if isinstance(st, _ffi.Expr) and _ffi.const_int(st) is None and not isinstance(st, _ffi.Var):
                raise TileLangUnsupportedError(f"T.StridedTensor stride `{_ffi.print_expr(st)}`: a stride is an int "
                                               "or a single T.dynamic symbol")
        self.strides = strides

    def strides_attr(self):
        """The strides as the function attribute the JIT reads: ints, or symbol names."""
        out = []
        for st in self.strides:
            v = st if isinstance(st, int) else _ffi.const_int(st)
            out.append(str(v) if v is not None else st.name)
        return ",".join(out)


class StridedTensorFactory:
    """T.StridedTensor((M, N), (S, 1), dtype) or T.StridedTensor[(M, N), (S, 1), dtype]."""

    def __call__(self, shape, strides, dtype="float32"):
        return self._spec(shape, strides, dtype)

    def __getitem__(self, item):
        return self._spec(*item)

    @staticmethod
    def _spec(shape, strides, dtype="float32"):
        try:
            return StridedTensorSpec(shape, strides, dtype)
        except TileLangError as e:
            if e.span is not None or builder.current() is not None:
                raise
            raise builder.error_at(builder.caller_span(sys._getframe(2)), str(e), type(e)) from None


StridedTensor = StridedTensorFactory()


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


def match_buffer(param, shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global", align=-1,
                 offset_factor=0, buffer_type="default", axis_separators=None):
    """TVMScript's `A = T.match_buffer(a, shape, dtype)` on an `a: T.handle` parameter: the parameter's tensor
    (as T.make_tensor). Dense row-major global tensors only: strides / elem_offset / another scope are refused;
    align / offset_factor / buffer_type / axis_separators other than their defaults are refused too (they
    describe layouts this compiler does not make)."""
    if data is not None or buffer_type != "default" or axis_separators:
        raise _unsupported("T.match_buffer(..., data= / buffer_type= / axis_separators=)",
                           "parameters are dense row-major tensors")
    if align not in (-1, 0) or offset_factor not in (0, 1):
        raise _unsupported("T.match_buffer(..., align= / offset_factor=)", "parameters are dense row-major tensors "
                           "at the address the caller passes")
    return make_tensor(param, shape, dtype, strides, elem_offset, scope)


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
