"""The T namespace of the DSL: `import tilelang.language as T`.

This module only gathers the names; each lives in the module of its family (as in TileLang's package):
dtypes (data types), proxy (T.Tensor / T.Buffer, pointers, buffer views), symbolics (T.dynamic), kernel
(T.Kernel, block and thread indices, T.ws), allocate, loop, copy_op, gemm_op, fill_op, reduce_op, atomic,
math_intrinsics, bitwise, rng (T.rng_init / T.rng_rand / T.rng_rand_float), builtin (barriers, fences,
T.call_intrin, T.attr, T.print, ...), customize (T.reinterpret, T.view, T.reshape), annotations (T.use_swizzle,
T.annotate_layout), eager (T.const, T.empty), macro_expand (T.macro), compat (TileLang names that are not
supported) and parser (T.prim_func).
tests/python/test_package_structure.py keeps the surface and the layering."""
import builtins  # noqa: F401  (T.builtins, T.enum and T.numbers were reachable before the split; kept so)
import enum  # noqa: F401
import numbers  # noqa: F401
import sys as _sys

from .. import _ffi
from ..errors import TileLangPerformanceWarning, TileLangSyntaxError, TileLangTypeError, TileLangUnsupportedError  # noqa: F401
from . import ast, bitwise, builder, compat, expr, loop_exits, parser  # noqa: F401
from .ast import AttrSpec, KernelSpec, LoopSpec, RegionSpec, region_of, simplify  # noqa: F401
from .dtypes import DType, dtype_str  # noqa: F401
from .dtypes import (bfloat16, bool, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e4m3, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float16, float32, float64,  # noqa: F401,A004
                     int4, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from .expr import Expr  # noqa: F401
from .parser import parse_source, prim_func  # noqa: F401
from .proxy import (Buffer, FragmentBuffer, LocalBuffer, SharedBuffer, StridedTensor, Tensor, TensorFactory,  # noqa: F401
                    TensorSpec, make_tensor, match_buffer, ptr)
from .symbolics import dynamic, symbolic  # noqa: F401
from .kernel import (ClusterKernel, Kernel, WarpSpecialize, get_block_binding, get_block_bindings, get_thread_binding,  # noqa: F401
                     get_thread_bindings, ws)
from .allocate import (alloc_barrier, alloc_buffer, alloc_cluster_barrier, alloc_fragment, alloc_global, alloc_local, alloc_reducer,  # noqa: F401
                       alloc_shared, alloc_tmem, alloc_var, alloc_L1, alloc_L0A, alloc_L0B, alloc_L0C, alloc_ub,
                       alloc_l1, alloc_l0a, alloc_l0b, alloc_l0c)
from .builtin import (all_sync, annotate_consumer_reg_alloc, annotate_producer_reg_dealloc, any_sync,  # noqa: F401
                      assume, attr, barrier_arrive, barrier_wait, block_rank_in_cluster, call_intrin,
                      clc_get_first_ctaid_x, clc_get_first_ctaid_y, clc_get_first_ctaid_z, clc_is_canceled,
                      clc_try_cancel, clc_try_cancel_multicast,
                      cluster_arrive, cluster_arrive_relaxed, cluster_sync, cluster_wait, device_assert,
                      disable_warp_group_reg_alloc, evaluate, fence_proxy_async, mbarrier_arrive,
                      mbarrier_arrive_expect_tx, mbarrier_expect_tx, mbarrier_wait_parity, no_set_max_nreg, print,
                      set_max_nreg, shuffle_elect, sync_grid, sync_threads, tma_store_arrive, tma_store_wait,
                      tvm_warp_shuffle)  # noqa: A004
from .tile_scheduler import PersistentTileScheduler  # noqa: F401
from .loop import (Parallel, Persistent, Pipelined, Serial, grid, parallel, serial, thread_binding,  # noqa: F401
                   unroll, vectorized)
from .copy_op import (c2d_im2col, copy, copy_cluster, im2col, tma_copy, tma_gather4, tma_gather4_bytes,  # noqa: F401
                      tma_scatter4)
from .gemm_op import (GemmWarpPolicy, gemm, make_blockscaled_gemm_layout, mma_gemm_blockscaled,  # noqa: F401
                      tcgen05_gemm, tcgen05_mma_arrive, tcgen05_gemm_blockscaled, tcgen05_cp_warpx4, tcgen05_sf_warp_transpose,  # noqa: F401
                      wait_wgmma, wgmma_gemm)
from .fill_op import clear, fill  # noqa: F401
from .reduce_op import (cumsum, finalize_reducer, reduce_absmax, reduce_abssum, reduce_max, reduce_min,  # noqa: F401
                        reduce_sum)
from .atomic import atomic_add, atomic_addx2, atomic_addx4, atomic_load, atomic_max, atomic_min, atomic_store  # noqa: F401
from .math_intrinsics import (Cast, abs, cast, ceil, ceildiv, clamp, cos, erf, exp, exp2, floor, floordiv,  # noqa: F401,A004
                              floormod, if_then_else, infinity, log, log2, log10, max, max_value, min, min_value,
                              nan, pow, round, rsqrt, sigmoid, sin, sqrt, tanh, trunc, truncdiv, truncmod)
from .bitwise import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, clz, dp4a, popcount,  # noqa: F401
                      shift_left, shift_right)
from .customize import reinterpret, reshape, view  # noqa: F401
from .rng import rng_init, rng_rand, rng_rand_float  # noqa: F401
from .annotations import annotate_layout, use_swizzle  # noqa: F401
from .eager import annotate_pass_configs, const, empty  # noqa: F401
from .macro_expand import Macro, macro  # noqa: F401
from .macro_refs import Ref  # noqa: F401
from .utils import index_to_coordinates, linear_index  # noqa: F401
from .extern import call_extern, import_source  # noqa: F401
from .async_copy import access_ptr, cp_async_barrier_noinc, ptx_commit_group, ptx_cp_async, ptx_wait_group  # noqa: F401
from .thread_reduce import comm_reducer, tvm_thread_allreduce  # noqa: F401
from .ws_schedule import (WSID, WSOpRef, WSPipeline, WSRole, WSSchedule, WSScope, WSSync, WSSyncKind,  # noqa: F401
                          annotate_ws_schedule, ws_op)
from ..layout import Fragment, Layout  # noqa: F401

PrimFunc = _ffi.PrimFunc
handle = ptr  # TVMScript's `a: T.handle` parameter: a pointer given its tensor by T.match_buffer / T.make_tensor


def __getattr__(name):
    # Names that would shadow Python builtins inside the modules (float, int, ...) are served here.
    from . import dtypes as _dtypes

    if name == "dtype":
        return DType  # T.dtype("float16") == T.float16; isinstance(T.float16, T.dtype)
    if name in _dtypes.DTYPE_ALIASES:
        return DType(_dtypes.DTYPE_ALIASES[name])
    if name in _dtypes.UNSUPPORTED_DTYPES:
        return _dtypes._Unsupported_DType(name, _dtypes.UNSUPPORTED_DTYPES[name])
    raise AttributeError(f"module 'tilelang.language' has no attribute '{name}'")


# x.astype(dtype), as on TileLang's (TVM's) expressions: a value conversion, like T.cast.
Expr.astype = lambda self, dtype: _ffi.cast(dtype_str(dtype), self)

# print(func) and func.script() show the function in the DSL, like TileLang's PrimFunc.
PrimFunc.__str__ = lambda self: _ffi.print_func(self)
PrimFunc.script = lambda self, *args, **kwargs: _ffi.print_func(self)

# parse_source runs DSL text with `T` bound to this namespace (the parser cannot import its own package).
parser._namespace = _sys.modules[__name__]
