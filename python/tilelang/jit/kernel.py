"""Compiled kernels as Python callables: argument marshalling (NumPy, PyTorch, any DLPack
tensor), output allocation for out_idx, and access to the generated source."""
import os

import numpy as np

from .. import _ffi
from ..errors import TileLangArgumentError, TileLangResourceError, TileLangUnsupportedError
from ..language.dtypes import numpy_dtype as _np_dtype
from . import target as _target
from .headers import include_dir  # noqa: F401  (tilelang.jit.kernel.include_dir, as before)


def _dtype_name(dt):
    name = str(dt).replace("torch.", "")
    return {"half": "float16", "float": "float32", "double": "float64", "bool_": "bool"}.get(name, name)


_INT_RANGE = {"bool": (0, 1), "int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1),
              "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1), "uint8": (0, 2**8 - 1),
              "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}


def _arg_label(func, index):
    """'argument 3 ('beta') of kernel 'axpb'' -- how call-time errors name a parameter."""
    if 0 <= index < len(func.params):
        return f"argument {index} ('{func.params[index][0].name}') of kernel '{func.name}'"
    return f"argument {index} of kernel '{func.name}'"


def _show_int(v):
    """An integer for a message (Python refuses to print ints of more than 4300 digits)."""
    return str(v) if abs(v) < 10**60 else f"an integer of {v.bit_length()} bits"


def _scalar_param_dtype(func, index):
    if 0 <= index < len(func.params) and func.params[index][1] is None:
        return func.params[index][0].dtype
    return None  # a scalar for a tensor parameter: the C++ checker reports it


def _check_scalar(x, func, index):
    """A Python / NumPy scalar for a scalar parameter: integer parameters take integral values in range
    (the launcher would otherwise truncate 1.5 to 1 silently)."""
    dtype = _scalar_param_dtype(func, index)
    if dtype not in _INT_RANGE:
        return
    if isinstance(x, (float, np.floating)) or not isinstance(x, (bool, int, np.integer, np.bool_)):
        raise TileLangArgumentError(f"{_arg_label(func, index)} is a scalar of type {dtype} but got the "
                                    f"{type(x).__name__} value {x!r}; pass an integer")
    lo, hi = _INT_RANGE[dtype]
    if not lo <= int(x) <= hi:
        raise TileLangArgumentError(f"{_arg_label(func, index)} is a scalar of type {dtype} but {_show_int(int(x))} is "
                                    f"out of its range [{lo}, {hi}]")


def _scalar_arg(x, func, index):
    """A scalar crosses into the kernel with its exact value: integers as int64 bits (never through a
    double), floats as double; the C++ side packs it as the parameter's declared type and range-checks it."""
    _check_scalar(x, func, index)
    dtype = _scalar_param_dtype(func, index)
    integral = isinstance(x, (bool, int, np.integer, np.bool_))
    if integral and (dtype is None or dtype in _INT_RANGE):
        v = int(x)
        if not -2**63 <= v < 2**64:
            raise TileLangArgumentError(f"{_arg_label(func, index)}: the scalar {_show_int(v)} does not fit in 64 bits")
        return _ffi.make_int_scalar_arg(v - 2**64 if v >= 2**63 else v, v >= 2**63)
    if integral or isinstance(x, (float, np.floating)):
        try:
            f = float(x)
        except OverflowError:
            raise TileLangArgumentError(f"{_arg_label(func, index)} is a scalar of type {dtype} but "
                                        f"{_show_int(int(x))} is out of its range") from None
        return _ffi.make_scalar_arg(f)
    raise TileLangArgumentError(f"{_arg_label(func, index)}: a scalar of type {type(x).__name__} ({x!r}) cannot be "
                                "passed; use a Python int or float")


def _tensor_desc(x, func, index, data, dtype, shape, strides, device, written, read_only=False):
    """The one description of a tensor argument, whichever library made it (NumPy, PyTorch, DLPack):
    element strides, the written-but-read-only check and the layout of an empty tensor."""
    if written and read_only:
        raise TileLangArgumentError(f"{_arg_label(func, index)} is written by the kernel but the array is "
                                    "read-only; pass a writable array (e.g. a copy: np.array(x))")
    shape = [int(s) for s in shape]
    strides = [int(s) for s in strides]
    if any(s == 0 for s in shape):  # an empty tensor has no layout to check
        strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
        data = 0
    return _ffi.make_tensor_arg(data, _dtype_name(dtype), shape, strides, device), x


def _torch_device(x):
    return x.device.type  # "cpu", "cuda", ...: the launcher checks it against the target's device


def _to_arg(x, func, index, written=False):
    """Describes a tensor (or scalar) for the C++ checker without copying it; `index` is the position of
    the parameter it binds; `written`: the kernel writes this parameter."""
    if isinstance(x, np.ndarray):
        if not x.dtype.isnative:
            raise TileLangArgumentError(f"{_arg_label(func, index)}: the array's byte order ({x.dtype.str}) is not "
                                        "the machine's; convert it with .astype(its_dtype.newbyteorder('='))")
        itemsize = x.dtype.itemsize
        if itemsize and x.size and any(s % itemsize for s in x.strides):
            raise TileLangArgumentError(f"{_arg_label(func, index)}: the array's byte strides {x.strides} are not "
                                        f"multiples of its item size ({itemsize} bytes); pass np.ascontiguousarray(x)")
        strides = [s // itemsize if itemsize else 0 for s in x.strides]
        return _tensor_desc(x, func, index, x.ctypes.data, x.dtype, x.shape, strides, "cpu", written,
                            read_only=not x.flags.writeable)
    mod = type(x).__module__
    if mod.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "stride"):
        if str(getattr(x, "layout", "torch.strided")) != "torch.strided":
            raise TileLangArgumentError(f"{_arg_label(func, index)}: a torch tensor with layout {x.layout} cannot "
                                        "be passed; pass x.to_dense()")
        if getattr(x, "is_conj", lambda: False)() or getattr(x, "is_neg", lambda: False)():
            x = x.resolve_conj().resolve_neg()  # lazily conjugated / negated views: their memory is not the value
        if getattr(x.device, "type", None) == "meta":
            raise TileLangArgumentError(f"{_arg_label(func, index)}: a tensor on torch's 'meta' device has no "
                                        "memory; pass a real tensor")
        return _tensor_desc(x, func, index, x.data_ptr(), x.dtype, x.shape, x.stride(), _torch_device(x), written)
    if isinstance(x, (bool, int, float, np.generic)):
        return _scalar_arg(x, func, index), x
    if hasattr(x, "__dlpack__"):
        try:
            arr = np.from_dlpack(x)
        except Exception as e:  # e.g. a GPU tensor
            raise TileLangArgumentError(f"{_arg_label(func, index)}: cannot read this DLPack tensor on the CPU "
                                        f"({e})") from None
        desc, _ = _to_arg(arr, func, index, written)
        return desc, (x, arr)  # keep both alive for the call
    raise TileLangArgumentError(f"{_arg_label(func, index)}: expected a NumPy array, a PyTorch tensor or a DLPack "
                                f"tensor, got {type(x).__name__}")



def _aligned(a, align=256):
    """`a` (a contiguous host array that the kernel only reads) at an address that is a multiple of `align`, as a
    device allocation is: a copy where it is not. A TMA map of packed fp4 values (16U4_ALIGN16B) needs 32 bytes."""
    a = np.ascontiguousarray(a)
    if a.ctypes.data % align == 0:
        return a
    raw = np.empty(a.nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    out = raw[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out

class KernelParam:
    """A kernel parameter as JITKernel.params lists it (TileLang's KernelParam): name, dtype, shape."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, shape

    def is_scalar(self):
        return self.shape is None

    def __repr__(self):
        return f"KernelParam({self.name!r}, {self.dtype!r}, {self.shape!r})"


def kernel_params(func):
    """A PrimFunc's parameters in order, as KernelParams (.name, .dtype, .shape: ints where constant, None for a
    scalar)."""
    out = []
    for var, buf in func.params:
        if buf is None:
            out.append(KernelParam(var.name, var.dtype, None))
        else:
            dims = [_ffi.const_int(e) for e in buf.shape]
            out.append(KernelParam(buf.name, buf.dtype, tuple(d if d is not None else e
                                                              for d, e in zip(dims, buf.shape))))
    return out


def _emulator_check(cfg, name):
    """Whether the emulators report `name` ("races", "uninit"): the pass config emulator.check_<name>, else the
    environment's TILELANG_EMULATOR_CHECK_<NAME> ("0" turns it off, for programs run unchanged), else on."""
    if f"emulator.check_{name}" in cfg:
        return bool(cfg[f"emulator.check_{name}"])
    env = os.environ.get(f"TILELANG_EMULATOR_CHECK_{name.upper()}")
    if env is not None and env.strip().lower() not in ("0", "1", "false", "true", "off", "on"):
        raise ValueError(f"TILELANG_EMULATOR_CHECK_{name.upper()}={env!r}: use 0 or 1")
    return env is None or env.strip().lower() in ("1", "true", "on")


def pack_fp6(a):
    """An fp6 array [..., K] (one value a byte, ml_dtypes) as the tcgen05 family's fp6 tensors hold it: four values
    in 3 bytes, the first in the lowest 6 bits (uint8 [..., 3 K / 4]; K a multiple of 4)."""
    c = (np.ascontiguousarray(a).view(np.uint8) & 0x3F).astype(np.uint32)
    w = c[..., 0::4] | (c[..., 1::4] << 6) | (c[..., 2::4] << 12) | (c[..., 3::4] << 18)
    return np.stack([w & 0xFF, (w >> 8) & 0xFF, (w >> 16) & 0xFF], axis=-1).astype(np.uint8) \
        .reshape(*a.shape[:-1], a.shape[-1] * 3 // 4)


def _pack_nibbles_into(orig, values):
    """Writes one-value-a-byte int4 / fp4 `values` into `orig`, an int8 / uint8 (or torch float4_e2m1fn_x2)
    tensor holding two a byte (low first)."""
    v = np.asarray(values)
    v = (v.view(np.uint8) if v.dtype.itemsize == 1 and v.dtype.kind not in "iub" else v).astype(np.int16) & 0xF
    b = (v[..., 0::2] | (v[..., 1::2] << 4)).astype(np.uint8)
    if hasattr(orig, "copy_"):
        import torch

        if str(orig.dtype) == "torch.float4_e2m1fn_x2":
            orig.view(torch.uint8).copy_(torch.from_numpy(b).to(orig.device))
        else:
            orig.copy_(torch.from_numpy(b.view(np.int8) if str(orig.dtype) == "torch.int8" else b).to(orig.device))
    else:
        orig[...] = b.view(orig.dtype)


class JITKernel:
    """A compiled kernel: call it with tensors; with out_idx, the outputs are allocated and returned.

    Every target goes through the one compile entry point (``_ffi.compile``, src/target/backend.h)
    and its backend's module loader; what differs between targets lives in the backend registry."""

    def __init__(self, func, out_idx=None, target="cpu", execution_backend=None, pass_configs=None, verbose=False):
        self.func = func
        if (target is None or target == "auto") and execution_backend in ("emulator", "ptx"):
            target = "cuda"  # "auto" picks a GPU target for the emulators (they run GPU kernels only)
        requested = _target.Target(target)
        self.kind = requested.kind
        self.target_opts = {"arch": requested.arch} if requested.arch_given else {}
        self.pass_configs = dict(pass_configs or {})
        if self.kind != "cuda" and str(self.pass_configs.get("tl.enable_fast_math", False)) in ("True", "1", "true"):
            from ..log import warn

            warn(f"pass config 'tl.enable_fast_math' has an effect on the CUDA target only (NVRTC --use_fast_math); "
                 f"target '{self.kind}' compiles exact math")
        self.out_idx = _normalize_out_idx(out_idx, func)
        header_dir, self.fragment_kinds, names, emulatable, _ = _ffi.backend_info(self.kind)
        if execution_backend == "emulator":
            if not emulatable:
                raise TileLangUnsupportedError(f"execution_backend 'emulator' runs GPU kernels; target '{self.kind}' "
                                               f"is not one (use {names[0]!r})")
            self.execution_backend = "emulator"
        elif execution_backend == "ptx":
            if self.kind != "cuda":
                raise TileLangUnsupportedError(f"execution_backend 'ptx' runs the PTX of CUDA kernels; target "
                                               f"'{self.kind}' is not CUDA (use {names[0]!r} or 'emulator')")
            self.execution_backend = "ptx"
        elif execution_backend in (None, "auto") or execution_backend in names:
            self.execution_backend = names[0]
        else:
            accepted = (["auto"] + [n for n in names if n != "auto"] + (["emulator"] if emulatable else [])
                        + (["ptx"] if self.kind == "cuda" else []))
            raise TileLangUnsupportedError(f"execution_backend '{execution_backend}' is not available for target "
                                           f"'{self.kind}'; use one of {accepted}")
        will_run = self.execution_backend not in ("emulator", "ptx")
        build = will_run or self.execution_backend == "ptx"  # the PTX emulator runs NVRTC's PTX
        # the target the kernel is built for: e.g. the GPU's arch when none is named and a GPU runs it
        self.target = _target.Target(_ffi.resolve_target(str(requested), will_run))
        cfg = {k: ("1" if v is True else "0" if v is False else str(v)) for k, v in self.pass_configs.items()}
        if self.execution_backend == "ptx":
            cfg.setdefault("cuda.lineinfo", "1")  # .loc lines: the PTX emulator's reports name CUDA and DSL lines
            ignored = [k for k in ("emulator.check_shift_counts", "emulator.subgroup_size", "emulator.subgroup_strided")
                       if k in self.pass_configs]
            if ignored:
                from ..log import warn

                warn(f"pass config {', '.join(ignored)} applies to the thread-level emulator only; the PTX emulator "
                     "runs PTX's shifts (clamped counts) and has no OpenCL sub-groups")
        from ..tools.lower_trace import trace_from_env

        # A function launching several T.Kernel scopes one after another: on a GPU target each is a kernel of
        # its own (the first one here, the others in self._parts), launched in order with the same arguments.
        # Workspaces (T.alloc_global) become parameters first, so that every kernel sees the same ones.
        parts = [func]
        if self.kind != "cpu":
            split = list(_ffi.split_kernels(_ffi.hoist_workspaces(func)))
            parts = split if len(split) > 1 else [func]
        first = parts[0]
        self._compiled = trace_from_env(first, self.target, cfg, build_binary=build)
        if self._compiled is None:
            self._compiled = _ffi.compile(first, str(self.target), cfg, include_dir(), True, "", build)
        self._written = list(self._compiled.written)
        # T.alloc_global workspaces: trailing parameters of the compiled function, allocated per call
        self._launch_func = self._compiled.func
        self._workspace_idx = list(range(len(func.params), len(self._launch_func.params)))
        # T.int4 / T.uint4 / T.float4_e2m1fn tensor parameters (TileLang's callers may pass them packed:
        # _packed_int4_arguments)
        self._nibble_params = {i: str(p[1].dtype) for i, p in enumerate(self._launch_func.params)
                               if p[1] is not None and str(p[1].dtype) in ("int4", "uint4", "float4_e2m1fn")}
        # float4_e2m1fn tensor parameters the compiler stores two values a byte (uint8 [..., K / 2]: sm_120a's
        # NVFP4 operands, src/target/cuda/pack_fp4_tiles.cc): _packed_fp4_arguments
        # (and fp6 ones four values in 3 bytes, uint8 [..., 3 K / 4]: the tcgen05 family's fp6 operands)
        self._packed_fp4 = {i for i, p in enumerate(func.params)
                            if p[1] is not None
                            and str(p[1].dtype) in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn")
                            and str(self._launch_func.params[i][1].dtype) == "uint8"}
        # the runtime module: loaded now for a CPU library, on first launch for devices
        self._mod = _ffi.load_module(self._compiled) if will_run else None
        self._parts = [JITKernel(p, None, str(self.target), execution_backend, pass_configs, verbose)
                       for p in parts[1:]]
        for p in self._parts:
            if len(p._launch_func.params) != len(self._launch_func.params):
                raise TileLangUnsupportedError(
                    f"'{func.name}' launches {len(parts)} kernels and a T.alloc_global workspace is not used by all "
                    f"of them; on target '{self.kind}' each kernel is built alone, so a workspace must be used by "
                    "every kernel (or by one)")
        self.warnings = list(self._compiled.warnings)
        self.last_lane_ops = 0
        self.last_bank_conflicts = {}
        if self.warnings:
            from ..errors import TileLangPerformanceWarning
            from ..log import warn

            for w in self.warnings:
                warn(w, TileLangPerformanceWarning)
        if verbose:
            if self._compiled.choices or self._compiled.smem_report:
                print("\n".join(self._compiled.choices))
                print(self._compiled.smem_report)
            print(self.get_kernel_source())

    @property
    def from_cache(self):
        return self._compiled.from_cache

    @property
    def compiled(self):
        """What the compiler produced: lowered IR, source, binary (bytes), info, launch description."""
        return self._compiled

    def get_kernel_source(self):
        """The generated source; for a function of several kernels (a GPU target), each kernel's, in order."""
        if self._parts:
            return "\n".join([self._compiled.source] + [p._compiled.source for p in self._parts])
        return self._compiled.source

    # ---- GPU artifacts -----------------------------------------------------------------------
    def _cuda(self, what):
        if self.kind != "cuda":
            raise TileLangUnsupportedError(f"{what} exists only for target 'cuda' (this kernel is for '{self.kind}')")
        return self._compiled

    def _gpu(self, what):
        if not _ffi.backend_info(self.kind)[3]:
            raise TileLangUnsupportedError(f"{what} exists only for GPU targets (this kernel is for '{self.kind}')")
        return self._compiled

    def get_ptx(self):
        """The PTX of the kernel (empty when built for the emulator only)."""
        return self._cuda("PTX").ptx

    def get_resource_usage(self):
        """CUDA: registers, shared_bytes (dynamic), static_shared_bytes, spill_stores, spill_loads, stack_bytes
        (ptxas). HIP: vgprs, agprs, sgprs, lds_bytes, scratch_bytes, spill_stores, occupancy, mfma_count (hipcc)."""
        if self.kind == "hip":
            return dict(self._compiled.resources)
        return dict(self._cuda("resource usage").resources)

    def get_assembly(self):
        """HIP: the AMDGPU assembly hipcc produced for the code object (empty when built for the emulator only)."""
        if self.kind != "hip":
            raise TileLangUnsupportedError(f"get_assembly exists for target 'hip' (this kernel is for '{self.kind}')")
        return self._compiled.ptx

    def get_shared_memory_report(self):
        """Per-buffer shared-memory footprint (buffer, shape, dtype, stages, bytes, offset) against the limit."""
        return self._gpu("a shared-memory report").smem_report

    def get_source_map(self):
        """[(dsl_file, dsl_line, first, last)]: the 1-based lines of get_kernel_source() that each tile op
        (or T.Parallel nest) of the DSL produced, in source order."""
        import os.path as osp
        import re

        spans = {op: (f, line) for op, f, line, _ in _ffi.tile_op_spans(self._gpu("source map").lowered)}
        out, open_ = [], {}
        for i, text in enumerate(self.get_kernel_source().splitlines(), 1):
            m = re.match(r"\s*// (end )?tile op (\d+)$", text)
            if not m:
                continue
            op = int(m.group(2))
            if m.group(1) is None:
                open_[op] = i + 1
            elif op in open_ and op in spans:
                f, line = spans[op]
                out.append((osp.abspath(f) if f and not f.startswith("<") else f, line, open_.pop(op), i - 1))
        return out

    def _with_dsl_line(self, message):
        """A PTX emulator report naming a line of the generated CUDA (from the PTX's .loc lines), with the DSL line
        of the tile op that produced it appended (get_source_map)."""
        import re

        m = re.search(r"tl_kernel\.cu:(\d+)", message)
        if not m:
            return message
        line = int(m.group(1))
        for f, dsl_line, first, last in self.get_source_map():
            if first <= line <= last:
                return message + f"\n  from the DSL at {f}:{dsl_line}"
        return message

    def get_lowered_ir(self):
        """The thread-level IR the CUDA code generator printed (and the emulator executes)."""
        return _ffi.print_func(self._gpu("thread-level IR").lowered)

    @property
    def choices(self):
        """Every lowering decision (copy paths, pipelines, gemm instruction and warp split, loop
        partitions, vector widths, reduction strategy; on the CPU the ISA and micro-kernel of each gemm),
        one line each with its source location."""
        return list(self._compiled.choices)

    @property
    def layouts(self):
        return dict(self._gpu("layouts").layouts)

    def _allocation_error(self, idx, shape, dtype, cause):
        """The error for an output or workspace the call could not allocate: where it was declared, its size."""
        from ..language import builder

        name = self._launch_func.params[idx][1].name
        count = 1
        for d in shape:
            count *= int(d)
        nbytes = count * _np_dtype(dtype).itemsize
        what = "workspace" if idx in self._workspace_idx else "output"
        msg = (f"kernel '{self.func.name}': cannot allocate its {what} '{name}' of shape {tuple(int(d) for d in shape)} "
               f"{dtype} ({nbytes} bytes): {type(cause).__name__}: {cause}; make the output smaller or pass a smaller "
               "input")
        how, span = getattr(self, "output_origins", {}).get(idx, (None, None))
        if span is not None:
            return builder.error_at(span, f"{how}: {msg}", TileLangResourceError)
        return TileLangResourceError(msg)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TileLangArgumentError(f"kernel '{self.func.name}' takes its arguments by position only; got keyword "
                                        f"argument(s) {', '.join(sorted(kwargs))}")
        n = len(self.func.params)
        allocated = self.out_idx + self._workspace_idx
        if self.out_idx:
            if len(args) != n - len(self.out_idx):
                raise TileLangArgumentError(f"kernel '{self.func.name}' takes {n - len(self.out_idx)} inputs "
                                            f"(outputs {self.out_idx} are allocated for you), got {len(args)}")
        elif len(args) != n:
            raise TileLangArgumentError(f"kernel '{self.func.name}' takes {n} arguments but {len(args)} were given")
        in_idx = [i for i in range(n) if i not in self.out_idx]
        if self._packed_fp4:
            args = self._packed_fp4_arguments(args, in_idx)
        args, packed = self._packed_int4_arguments(args, in_idx) if self._nibble_params else (args, [])
        outs, full = [], list(args)
        if allocated:
            descs = [_to_arg(a, self.func, i)[0] for i, a in zip(in_idx, args)]
            shapes = self._compiled.output_shapes(descs, allocated)
            like_torch = next((a for a in args if type(a).__module__.startswith("torch")), None)
            made = []
            for idx, shape in zip(allocated, shapes):
                dtype = self._launch_func.params[idx][1].dtype
                zero = idx in self._workspace_idx  # workspaces start zero-filled; outputs are written
                try:
                    if like_torch is not None:
                        import torch

                        new = torch.zeros if zero else torch.empty
                        made.append(new(shape, dtype=getattr(torch, dtype), device=like_torch.device))
                    else:
                        made.append((np.zeros if zero else np.empty)(shape, dtype=_np_dtype(dtype)))
                except (MemoryError, ValueError, RuntimeError) as e:  # RuntimeError: torch's out of memory
                    raise self._allocation_error(idx, shape, dtype, e) from None
            outs = made[:len(self.out_idx)]
            full, it_in, it_out = [], iter(args), iter(made)
            for i in range(n + len(self._workspace_idx)):
                full.append(next(it_out) if i in allocated else next(it_in))
        full, copied = self._strided_arguments(full)
        self._launch(full)
        for p in self._parts:
            p._launch(full)
            self.last_lane_ops += p.last_lane_ops
        for orig, values in packed:  # int4 tensors passed packed two a byte: the results packed back
            _pack_nibbles_into(orig, values)
        for orig, dense in copied:  # T.StridedTensor arguments copied for the launch: copy the results back
            if hasattr(orig, "copy_"):
                orig.copy_(dense)
            else:
                orig[...] = dense
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else outs

    def _emulated_fp4(self, a):
        """A packed fp4 argument of an emulated launch at a device allocation's alignment (a copy of a host array or
        CPU tensor whose address is not; such parameters are only read)."""
        if self.execution_backend not in ("emulator", "ptx"):
            return a
        if isinstance(a, np.ndarray):
            return _aligned(a)
        if hasattr(a, "detach") and getattr(a.device, "type", None) == "cpu" and a.data_ptr() % 256:
            return _aligned(a.detach().contiguous().numpy())
        return a

    def _packed_fp4_arguments(self, args, param_idx):
        """Arguments of the float4_e2m1fn parameters the kernel reads two values a byte (self._packed_fp4): a
        tensor already packed so (int8 / uint8 [..., K / 2], torch's float4_e2m1fn_x2) is passed as it is, viewed
        as uint8 (no copy: a device tensor stays on its device); an array of one value a byte (ml_dtypes
        float4_e2m1fn) is packed first, the first of each pair in the low nibble. Such parameters are only read."""
        out = list(args)
        for i, pi in enumerate(param_idx[:len(out)]):
            if pi not in self._packed_fp4:
                continue
            a = out[i]
            kind = str(getattr(a, "dtype", "")).replace("torch.", "")
            if hasattr(a, "detach") and kind in ("int8", "uint8", "float4_e2m1fn_x2"):
                import torch

                out[i] = a.view(torch.uint8)
            elif isinstance(a, np.ndarray) and kind in ("int8", "uint8"):
                out[i] = _aligned(a.view(np.uint8))
            elif isinstance(a, np.ndarray) and kind in ("float6_e2m3fn", "float6_e3m2fn"):
                if not a.ndim or a.shape[-1] % 4:
                    raise TileLangArgumentError(
                        f"argument {pi} ('{self.func.params[pi][1].name}') of kernel '{self.func.name}': a "
                        f"{kind} array of shape {a.shape} cannot be packed four values in 3 bytes (its last "
                        "dimension must be a multiple of 4)")
                out[i] = _aligned(pack_fp6(a))
            elif isinstance(a, np.ndarray) and kind == "float4_e2m1fn":
                if not a.ndim or a.shape[-1] % 2:
                    raise TileLangArgumentError(
                        f"argument {pi} ('{self.func.params[pi][1].name}') of kernel '{self.func.name}': a "
                        f"float4_e2m1fn array of shape {a.shape} cannot be packed two values a byte (its last "
                        "dimension must be even)")
                c = np.ascontiguousarray(a).view(np.uint8) & 0xF
                out[i] = _aligned(np.ascontiguousarray(c[..., 0::2] | (c[..., 1::2] << 4)))
            else:
                shape = [str(x) for x in self.func.params[pi][1].shape]
                pdt = str(self.func.params[pi][1].dtype)
                how = ("packed two values a byte (an int8 / uint8 tensor whose last dimension is half the declared "
                       "one)" if pdt == "float4_e2m1fn" else "packed four values in 3 bytes, the first lowest (an "
                       "int8 / uint8 tensor whose last dimension is 3 / 4 of the declared one)")
                raise TileLangArgumentError(
                    f"argument {pi} ('{self.func.params[pi][1].name}') of kernel '{self.func.name}' is a "
                    f"{pdt} tensor [{', '.join(shape)}]: pass it {how} or one value a byte "
                    f"(ml_dtypes.{pdt}); got {kind or type(a).__name__}")
        return out

    def _packed_int4_arguments(self, args, param_idx):
        """TileLang stores int4 / uint4 / float4_e2m1fn tensors packed two values a byte (an int8 / uint8 tensor
        whose last dimension is half the declared one, the low nibble first: its int4 GEMM and NVFP4 examples;
        torch's float4_e2m1fn_x2 is the same bytes). Such an argument for a T.int4 / T.uint4 / T.float4_e2m1fn
        parameter is unpacked here into this project's one-value-a-byte form for the launch and packed back into
        the caller's tensor after it. Other arguments are left to the launch's checks. `args` are the caller's
        arguments, `param_idx` the parameter each one is."""
        out, packed = list(args), []
        for i, pi in enumerate(param_idx[:len(out)]):
            dtype = self._nibble_params.get(pi)
            if dtype is None:
                continue
            a = out[i]
            kind = str(getattr(a, "dtype", "")).replace("torch.", "")
            if kind not in ("int8", "uint8", "float4_e2m1fn_x2") or not getattr(a, "ndim", 0):
                continue
            if hasattr(a, "detach"):
                t = a.detach()
                if kind == "float4_e2m1fn_x2":
                    import torch

                    t = t.view(torch.uint8)
                host = t.cpu().numpy()
            else:
                host = np.asarray(a)
            b = np.ascontiguousarray(host).view(np.uint8)
            nib = np.stack([b & 0xF, b >> 4], axis=-1).reshape(*b.shape[:-1], b.shape[-1] * 2).astype(np.int16)
            if dtype == "int4":
                nib = (nib ^ 8) - 8  # sign-extend the nibble
            if dtype == "float4_e2m1fn":  # the code in the low nibble of a byte, as ml_dtypes holds it
                out[i] = np.ascontiguousarray(nib.astype(np.uint8)).view(_np_dtype(dtype))
            else:
                out[i] = nib.astype(_np_dtype(dtype))
            packed.append((a, out[i]))
        return out, packed

    def _strided_arguments(self, full):
        """T.StridedTensor parameters (attribute tl.param_strides.<i>): each tensor's strides, in elements, are
        checked against the declared ones (an int must match; a symbol is bound, the same in every parameter), and
        a tensor that is not contiguous is replaced by a contiguous copy for the launch (copied back after it)."""
        attrs = self.func.attrs
        specs = {int(k.rsplit(".", 1)[1]): v.split(",") for k, v in attrs.items()
                 if k.startswith("tl.param_strides.")}
        if not specs:
            return full, []
        full, copied, bound, loose = list(full), [], {}, []
        for i, declared in sorted(specs.items()):
            a = full[i]
            name = self.func.params[i][1].name if self.func.params[i][1] is not None else f"#{i}"
            if hasattr(a, "stride") and callable(a.stride):  # torch
                strides, contiguous = tuple(a.stride()), a.is_contiguous()
            elif isinstance(a, np.ndarray):
                strides = tuple(s // a.itemsize for s in a.strides)
                contiguous = a.flags["C_CONTIGUOUS"]
            else:
                continue  # not a tensor: the launch reports it
            if len(strides) != len(declared):
                continue  # a rank mismatch: the launch reports it with the expected shape
            for d, (want, got) in enumerate(zip(declared, strides)):
                if a.shape[d] == 1:
                    continue  # the stride of a unit dimension is never used
                if want.lstrip("-").isdigit():
                    if int(want) != got:
                        raise TileLangArgumentError(f"argument {i} ('{name}') of kernel '{self.func.name}' has "
                                                    f"strides {strides}, but dimension {d} is declared with stride "
                                                    f"{want} (T.StridedTensor)")
                elif bound.setdefault(want, got) != got:
                    raise TileLangArgumentError(f"argument {i} ('{name}') of kernel '{self.func.name}': stride "
                                                f"'{want}' is {got} here but {bound[want]} in an earlier argument")
            if not contiguous:
                loose.append((i, name, strides))
        for i, name, strides in loose:  # every argument checked first: then the copies
            a = full[i]
            if not getattr(self, "_strided_warned", False):
                import warnings

                from ..errors import TileLangPerformanceWarning

                self._strided_warned = True
                warnings.warn(f"kernel '{self.func.name}': T.StridedTensor argument '{name}' with strides {strides} "
                              "is copied into a contiguous tensor for the launch and back after it (kernels address "
                              "row-major storage here)", TileLangPerformanceWarning, stacklevel=3)
            dense = a.contiguous() if hasattr(a, "contiguous") else np.ascontiguousarray(a)
            full[i] = dense
            copied.append((a, dense))
        return full, copied

    def _launch(self, full):
        """Runs the kernel on every argument (outputs and workspaces included, allocated by the caller)."""
        # (fp4 tensors read two values a byte stand where a device allocation would: a TMA map of them may need 32
        # bytes of alignment, which a host copy of an array need not have)
        keep = [_to_arg(self._emulated_fp4(a) if i in self._packed_fp4 and not self._written[i] else a,
                        self._launch_func, i, self._written[i]) for i, a in enumerate(full)]
        descs = [k[0] for k in keep]
        if self.execution_backend == "ptx":
            cfg = self.pass_configs
            reports, total, lane_ops = _ffi.emulate_ptx(
                self._compiled, descs, _emulator_check(cfg, "races"), _emulator_check(cfg, "uninit"), 20)
            self.last_lane_ops = lane_ops
            if reports:
                from ..errors import TileLangEmulationError

                lines = [f"[{k}] {self._with_dsl_line(m)}" for k, m in reports]
                more = f"\n... and {total - len(reports)} more" if total > len(reports) else ""
                err = TileLangEmulationError(f"the PTX emulator found {total} problem(s) in kernel "
                                             f"'{self.func.name}':\n" + "\n".join(lines) + more)
                err.reports = tuple(reports)
                raise err
        elif self.execution_backend == "emulator":
            cfg = self.pass_configs
            reports, total, lane_ops, banks = self._compiled.emulate(
                descs, _emulator_check(cfg, "races"), _emulator_check(cfg, "uninit"),
                20, int(cfg.get("emulator.subgroup_size", 32)),
                cfg.get("emulator.subgroup_strided", False) in (True, 1, "1", "true", "True"),
                bool(cfg.get("emulator.check_shift_counts", True)))
            self.last_lane_ops = lane_ops
            # Shared-memory / LDS bank accounting of the last call, per (buffer, "read" | "write"):
            # passes (128 bytes each), extra cycles from bank conflicts (0: conflict-free), the worst pass.
            self.last_bank_conflicts = {(b, d): {"passes": p, "extra_cycles": x, "max_ways": w}
                                        for b, d, p, x, w in banks}
            if reports:
                from ..errors import TileLangEmulationError

                lines = [f"[{k}] {m}" for k, m in reports]
                more = f"\n... and {total - len(reports)} more" if total > len(reports) else ""
                err = TileLangEmulationError(f"the emulator found {total} problem(s) in kernel '{self.func.name}':\n"
                                             + "\n".join(lines) + more)
                err.reports = tuple(reports)
                raise err
        else:
            stream = 0  # the backend's default queue
            like_torch = next((a for a in full if type(a).__module__.startswith("torch")), None)
            if like_torch is not None and like_torch.is_cuda:
                import torch

                stream = torch.cuda.current_stream(like_torch.device).cuda_stream
            self._mod.launch(descs, stream)
        del keep

    # ---- TileLang's JITKernel members ----------------------------------------------------------
    @property
    def kernel_source(self):
        """The generated kernel source (as get_kernel_source())."""
        return self.get_kernel_source()

    def get_host_source(self):
        """There is no generated host code: the runtime (src/runtime) launches the kernel from its
        parameter table. This returns that description (parameters, grid, block) as C comments, so that
        scripts printing host and kernel sources still work."""
        lines = [f"// TileLang-C++: no host source is generated; the runtime launches '{self.func.name}' for "
                 f"target '{self.kind}' from its parameter table.", "// parameters:"]
        for p in self.params:
            lines.append(f"//   {p.name}: {p.dtype}" + (f" {list(p.shape)}" if p.shape is not None else " (scalar)"))
        if _ffi.backend_info(self.kind)[3]:
            lines.append(f"// block: {self._compiled.threads} threads")
        return "\n".join(lines) + "\n"

    @property
    def host_source(self):
        return self.get_host_source()

    def _sources(self, which):
        if which not in ("kernel", "host", "both"):
            raise TileLangArgumentError(f"which must be 'kernel', 'host' or 'both', got {which!r}")
        parts = []
        if which in ("kernel", "both"):
            parts.append(self.get_kernel_source())
        if which in ("host", "both"):
            parts.append(self.get_host_source())
        return "\n".join(parts)

    def show_source(self, which="kernel"):
        """Prints the kernel source, the host description (get_host_source) or both."""
        print(self._sources(which))

    def export_sources(self, kernel_path=None, host_path=None):
        """Writes the kernel source and/or the host description to files (None skips one)."""
        for path, text in ((kernel_path, self.get_kernel_source), (host_path, self.get_host_source)):
            if path is not None:
                with open(path, "w") as f:
                    f.write(text())

    def print_source_code(self, which="kernel", file=None):
        """TileLang's older name: export_sources(kernel_path=file) when file is given, else show_source."""
        if file is not None:
            self.export_sources(kernel_path=file)
        else:
            self.show_source(which)

    @property
    def params(self):
        """The kernel's parameters in order: each with .name, .dtype and .shape (None for a scalar)."""
        return kernel_params(self.func)

    def _usage(self, key):
        if self.kind not in ("cuda", "hip"):
            return None
        return self.get_resource_usage().get(key)

    @property
    def n_regs(self):
        """Registers per thread (CUDA: ptxas; HIP: VGPRs); None on other targets."""
        return self._usage("registers" if self.kind == "cuda" else "vgprs")

    @property
    def n_spills(self):
        """Spilled bytes (stores + loads, ptxas / the code object); None on other targets."""
        if self.kind == "cuda":
            u = self.get_resource_usage()
            return int(u.get("spill_stores", 0)) + int(u.get("spill_loads", 0))
        return self._usage("spill_stores")

    @property
    def n_max_threads(self):
        """The block size the kernel is launched with (GPU targets); None on the CPU target."""
        return self._compiled.threads if _ffi.backend_info(self.kind)[3] else None

    def show_ptx(self):
        print(self.get_ptx())

    def export_ptx(self, path):
        with open(path, "w") as f:
            f.write(self.get_ptx())

    def get_sass(self):
        """The cubin disassembled to SASS with cuobjdump (the toolkit's, or PyPI's nvidia-cuda-cuobjdump:
        `pip install "tilelang-cpp[sass]"`)."""
        from ..tools.sass import disassemble

        c = self._cuda("SASS")
        if not c.binary:
            raise TileLangUnsupportedError(f"kernel '{self.func.name}' has no cubin (built for the emulator only)")
        return disassemble(c.binary)

    def show_sass(self):
        print(self.get_sass())

    def export_sass(self, path):
        with open(path, "w") as f:
            f.write(self.get_sass())

    def export_library(self, path):
        """Writes the compiled artefact (its format: compiled.binary_format): the CPU target's shared library
        (so), the CUDA cubin, the HIP code object (hsaco), the OpenCL program binary, Metal's MSL (compiled
        where it runs). This package loads kernels back through tilelang.compile and its disk cache."""
        c = self._compiled
        if not c.binary:
            raise TileLangUnsupportedError(f"kernel '{self.func.name}' for '{self.kind}' has no binary to export "
                                           "(built for the emulator only: nothing was compiled)")
        with open(path, "wb") as f:
            f.write(c.binary)

    def run_once(self, func=None):
        """Runs the kernel (or func) once on the profiler's inputs; returns what it returns."""
        return self.get_profiler().run_once(func)

    def get_profiler(self, tensor_supply_type=None, **kwargs):
        from ..profiler import Profiler

        return Profiler(self, tensor_supply_type=tensor_supply_type, **kwargs)


def _normalize_out_idx(out_idx, func):
    """out_idx as a sorted list of distinct tensor-parameter positions (negative ones count from the end)."""
    n = len(func.params)
    if out_idx is None:
        return []
    if isinstance(out_idx, (int, np.integer)) and not isinstance(out_idx, bool):
        out_idx = [out_idx]
    if not isinstance(out_idx, (list, tuple)):
        raise TileLangArgumentError(f"out_idx must be an int or a list of ints, got {type(out_idx).__name__} "
                                    f"{out_idx!r}")
    seen = []
    for i in out_idx:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TileLangArgumentError(f"out_idx must hold parameter positions (ints), got {i!r} in {out_idx!r}")
        if not -n <= i < n:
            raise TileLangArgumentError(f"out_idx {i} is out of range for a kernel with {n} parameters")
        k = int(i) % n
        if k in seen:
            raise TileLangArgumentError(f"out_idx {list(out_idx)!r} names parameter {k} "
                                        f"('{func.params[k][0].name}') twice")
        if func.params[k][1] is None:
            raise TileLangArgumentError(f"out_idx names parameter {k} ('{func.params[k][0].name}'), which is a scalar; "
                                        "only tensors can be allocated as outputs")
        seen.append(k)
    return sorted(seen)
