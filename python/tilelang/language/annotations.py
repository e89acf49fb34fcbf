"""Annotations of a kernel: T.use_swizzle (block rasterisation) and T.annotate_layout (explicit layouts of
shared tiles and fragments)."""
import builtins

from .. import _ffi
from ..errors import TileLangSyntaxError, TileLangTypeError
from . import builder
from .dtypes import DType


def use_swizzle(panel_size=8, order="row", enable=True):
    """Block rasterisation for L2 reuse, as in TileLang: blocks are handed out panel by panel, a panel
    being `panel_size` rows of the grid (order="row") or columns (order="col"), and inside a panel one
    column (row) after another. The mapping is a bijection of the block indices (pass RasterizeBlocks)."""
    if not enable:
        return None
    if isinstance(panel_size, builtins.bool) or not isinstance(panel_size, builtins.int) or panel_size < 1:
        raise TileLangTypeError(f"T.use_swizzle(panel_size=...) takes a positive int, got {panel_size!r}")
    if order not in ("row", "col", "column"):
        raise TileLangTypeError(f"T.use_swizzle(order=...) is 'row' or 'col', got {order!r}")
    ctx = builder.current()
    if ctx is not None:
        sp = builder.span()
        ctx.attrs["tl.use_swizzle"] = f"panel={panel_size} order={order[:3]} at {sp[0]}:{sp[1]}" if sp else \
            f"panel={panel_size} order={order[:3]}"
    return None


def annotate_layout(layouts):
    """Explicit layouts for buffers, as {buffer: layout}, honoured by the GPU lowerings:
    - a shared tile with a T.Layout (logical index -> physical index, any rank): every access of the tile goes
      through it and the tile occupies its physical extent (padding included); copies stay 16-byte cp.async only
      where the layout keeps 16 bytes of a row together, TMA and wgmma (which read only their own swizzles) are
      not used for it (with a warning), and a T.gemm operand whose rows it breaks up is first copied into a tile
      of the compiler's layout;
    - tilelang.layout.make_swizzled_layout(buf): the compiler's own swizzle, whatever the target's is;
    - a fragment with a T.Fragment: layout inference starts from it, and an op needing another layout is a
      layout-conflict error naming this line.
    The CPU target has no layouts to choose: the annotation does not change its code (results never depend on
    a layout). Each layout is traced from its Python functions and checked over the whole tile here."""
    from ..layout import Layout, LayoutTraceError, _UserFragment, trace

    if not isinstance(layouts, dict):
        raise TileLangTypeError(f"T.annotate_layout takes a dict {{buffer: layout}}, got {type(layouts).__name__}")
    ctx = builder.require_context("T.annotate_layout")
    if not ctx.kernels:
        raise TileLangSyntaxError("T.annotate_layout must be called inside a `with T.Kernel(...)` block")
    frame = ctx.kernels[-1]
    sp = builder.span()
    for buf, layout in layouts.items():
        if not isinstance(buf, _ffi.Buffer):
            raise TileLangTypeError(f"T.annotate_layout: the keys are buffers, got {type(buf).__name__} {buf!r}")
        if layout is None:
            raise TileLangTypeError(f"T.annotate_layout: the layout of '{buf.name}' is None; pass a T.Layout, "
                                    "a T.Fragment or tilelang.layout.make_swizzled_layout(buffer)")
        if buf.scope == "shared":
            if not isinstance(layout, Layout):
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a shared tile; it takes a T.Layout "
                                        f"(logical -> physical index), not a {type(layout).__name__}")
            if layout.compiler_swizzle or _layout_difference(buf, layout) is None:
                continue  # the compiler's own swizzle: nothing to change
        elif buf.scope == "local.fragment" or buf.scope == "fragment":
            if isinstance(layout, Layout) and not isinstance(layout, _UserFragment):
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a fragment; it takes a T.Fragment "
                                        "(element -> thread, register), not a T.Layout")
            if not isinstance(layout, _UserFragment):
                value = layout.value(f"T.annotate_layout") if hasattr(layout, "value") else None
                if value is None:
                    raise TileLangTypeError(f"T.annotate_layout: the layout of fragment '{buf.name}' is a "
                                            f"{type(layout).__name__}, not a T.Fragment")
                frame.layouts.append((buf, value, sp))
                continue
        elif buf.scope == "global":
            _global_layout_warning(buf, layout, sp)
            continue
        elif buf.scope == "shared.tmem":
            from .gemm_op import BlockScaledAccumulatorLayout

            if not isinstance(layout, BlockScaledAccumulatorLayout):
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is tensor memory; it takes "
                                        "T.make_blockscaled_gemm_layout(C, A), not a " + type(layout).__name__)
            if layout.name != buf.name or layout.shape != tuple(_ffi.const_int(d) for d in buf.shape):
                raise TileLangTypeError(f"T.annotate_layout: the layout given for '{buf.name}' was made for "
                                        f"'{layout.name}' {layout.shape}")
            continue  # tcgen05 accumulators are placed as the MMA stores them
        else:
            raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a {buf.scope} buffer; layouts apply to "
                                    "global tensors, shared tiles (T.alloc_shared) and fragments (T.alloc_fragment)")
        shape = [_ffi.const_int(d) for d in buf.shape]
        if any(d is None for d in shape):
            raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' has a symbolic shape")
        if tuple(layout.shape) != tuple(shape):
            raise TileLangTypeError(f"T.annotate_layout: the layout given for '{buf.name}' is over shape "
                                    f"{tuple(layout.shape)}, but the buffer's shape is {tuple(shape)}")
        try:
            value = trace(layout, buf, sp)
        except LayoutTraceError as e:
            raise builder.error_at(sp, f"T.annotate_layout: the layout of '{buf.name}' cannot be compiled: {e}",
                                   TileLangTypeError) from None
        for prev, _, _ in frame.layouts:
            if prev.name == buf.name:
                raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' already has a layout")
        frame.layouts.append((buf, value, sp))
    return None


def _global_layout_warning(buf, layout, sp):
    """TileLang's FlashAttention backward kernels store their float32 dQ accumulator permuted (a T.Layout on the
    global tensor, in the kernel that accumulates it and in the one that reads it back) so that its atomic adds
    coalesce. Here a global tensor keeps its row-major storage: every kernel still reads back what it wrote, so
    results through kernels are the same, and only code that reads the raw storage on the host sees the
    difference. Not applied, so a TileLangPerformanceWarning says so at the annotation's line."""
    import warnings

    from ..errors import TileLangPerformanceWarning
    from ..layout import Layout

    if not isinstance(layout, Layout):
        raise TileLangTypeError(f"T.annotate_layout: '{buf.name}' is a global tensor; it takes a T.Layout, not a "
                                f"{type(layout).__name__}")
    shape = [_ffi.const_int(d) for d in buf.shape]
    if all(d is not None for d in shape) and tuple(layout.shape) != tuple(shape):
        raise TileLangTypeError(f"T.annotate_layout: the layout given for '{buf.name}' is over shape "
                                f"{tuple(layout.shape)}, but the tensor's shape is {tuple(shape)}")
    loc = _ffi.format_span(sp).partition("\n")[0] + ": " if sp else ""
    msg = (f"{loc}T.annotate_layout on the global tensor '{buf.name}' is not applied: it keeps its row-major "
           "storage (kernels read back what they wrote, so results are unchanged; the permuted storage that "
           "would coalesce its accesses is not used, and host code sees row-major data)")
    if sp:
        warnings.warn_explicit(msg, TileLangPerformanceWarning, sp[0], sp[1])
    else:
        warnings.warn(msg, TileLangPerformanceWarning)


def _layout_difference(buf, layout):
    """None when `layout` is, element for element, the XOR swizzle this compiler gives `buf` on sm_80; else why
    it is not."""
    shape = [_ffi.const_int(d) for d in buf.shape]
    if len(shape) != 2 or any(d is None for d in shape) or list(layout.shape) != shape:
        return f"the layout's shape {list(layout.shape)} is not the tile's constant 2-d shape {shape}"
    rows, cols = shape
    elem_bytes = DType(buf.dtype).itemsize
    for i in range(rows):
        for j in range(cols):
            off = _ffi.swizzled_offset(i, j, cols, elem_bytes)
            want = (off // cols, off % cols)
            try:
                got = layout.map_forward_index([i, j])
            except Exception:  # noqa: BLE001 - a layout of another rank: not the swizzle
                return "it is not the compiler's swizzle"
            if tuple(got) != want:
                return f"it maps [{i}, {j}] to {list(got)}; the compiler's swizzle puts it at {list(want)}"
    return None
