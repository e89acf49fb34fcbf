"""tilelang.transform.PassConfigKey: TileLang's pass-config keys, and how this compiler treats each one.

`normalize_pass_configs` turns a user's pass_configs (enum or string keys) into this compiler's options:
a key it implements is translated; a key whose request always holds here (no warp
specialisation to disable) is accepted quietly; any other TileLang key is accepted with a warning that
it has no effect. Keys that are neither TileLang's nor this compiler's are rejected.
"""
import enum

from .. import _ffi
from ..errors import TileLangTypeError


class PassConfigKey(str, enum.Enum):
    """TileLang's documented pass-config keys (tilelang/transform/pass_config.py)."""

    TL_SIMPLIFY = "tl.Simplify"
    TL_DISABLE_BUFFER_INIT_CHECK = "tl.disable_buffer_init_check"
    TL_DISABLE_DATA_RACE_CHECK = "tl.disable_data_race_check"
    TL_DISABLE_PRELOWER_SEMANTIC_CHECK = "tl.disable_prelower_semantic_check"
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_ENABLE_AUTO_WARP_SPECIALIZATION = "tl.enable_auto_warp_specialization"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_DISABLE_FAST_MATH = "tl.disable_fast_math"
    TL_PTXAS_REGISTER_USAGE_LEVEL = "tl.ptxas_register_usage_level"
    TL_ENABLE_PTXAS_VERBOSE_OUTPUT = "tl.enable_ptxas_verbose_output"
    TL_DEVICE_COMPILE_FLAGS = "tl.device_compile_flags"
    TL_EMIT_LINE_DIRECTIVES = "tl.emit_line_directives"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_LAYOUT_COST_MODEL = "tl.layout_cost_model"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_legalize"
    TL_DISABLE_VECTORIZE_256 = "tl.disable_vectorize_256"
    TL_DISABLE_DYNAMIC_TAIL_SPLIT = "tl.disable_dynamic_tail_split"
    TL_DYNAMIC_ALIGNMENT = "tl.dynamic_alignment"
    TL_ENABLE_ASYNC_COPY = "tl.enable_async_copy"
    TL_ENABLE_LOWER_LDGSTG = "tl.enable_lower_ldgstg"
    TL_ENABLE_LOWER_LDGSTG_PREDICATED = "tl.enable_lower_ldgstg_predicated"
    TL_ENABLE_VECTORIZE_PLANNER_VERBOSE = "tl.enable_vectorize_planner_verbose"
    TL_DISABLE_WGMMA = "tl.disable_wgmma"
    TL_DISABLE_TCGEN05 = "tl.disable_tcgen05"  # this compiler's: T.gemm stays on mma.sync on the tcgen05 family
    TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS = "tl.debug_merge_shared_memory_allocations"
    TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE = "tl.enable_aggressive_shared_memory_merge"
    TL_DISABLE_SHARED_MEMORY_REUSE = "tl.disable_shared_memory_reuse"
    TL_DISABLE_SHUFFLE_ELECT = "tl.disable_shuffle_elect"
    TL_DISABLE_LOOP_UNSWITCHING = "tl.disable_loop_unswitching"
    TL_DISABLE_THREAD_STORAGE_SYNC = "tl.disable_thread_storage_sync"
    TL_FORCE_LET_INLINE = "tl.force_let_inline"
    TL_AST_PRINT_ENABLE = "tl.ast_print_enable"
    TL_LAYOUT_VISUALIZATION_ENABLE = "tl.layout_visualization_enable"
    TL_LAYOUT_VISUALIZATION_FORMATS = "tl.layout_visualization_formats"
    TL_STORAGE_REWRITE_DETECT_INPLACE = "tl.storage_rewrite_detect_inplace"
    TL_DISABLE_OUT_OF_BOUND_WARNING = "tl.disable_out_of_bound_warning"
    TL_ENABLE_DUMP_IR = "tl.enable_dump_ir"
    TL_DUMP_IR_DIR = "tl.dump_ir_path"
    TL_PASS_PROFILE = "tl.pass_profile"
    TIR_ENABLE_EQUIV_TERMS_IN_CSE = "tir.enable_equiv_terms_in_cse_tir"
    TIR_DISABLE_CSE = "tir.disable_cse_tir"
    TIR_SIMPLIFY = "tir.Simplify"
    TIR_DISABLE_STORAGE_REWRITE = "tir.disable_storage_rewrite"
    TIR_DISABLE_VECTORIZE = "tir.disable_vectorize"
    TIR_USE_ASYNC_COPY = "tir.use_async_copy"
    TIR_ENABLE_DEBUG = "tir.enable_debug"
    TIR_MERGE_STATIC_SMEM = "tir.merge_static_smem"
    TIR_ADD_LOWER_PASS = "tir.add_lower_pass"
    TIR_NOALIAS = "tir.noalias"
    CUDA_KERNELS_OUTPUT_DIR = "cuda.kernels_output_dir"


def _truthy(v):
    return v not in (False, 0, None, "0", "false", "False", "")


# TileLang key -> (this compiler's key, value transform): implemented by translation.
_TRANSLATED = {
    "tl.disable_thread_storage_sync": ("tl.user_sync_shared", _truthy),
    "tl.enable_async_copy": ("tl.disable_async_copy", lambda v: not _truthy(v)),
    "tir.use_async_copy": ("tl.disable_async_copy", lambda v: not _truthy(v)),
}
# Requests that always hold here, whatever the value: this compiler never emits what they disable.
_ALWAYS_HOLDS = {
    "tl.disable_vectorize_256": "vector accesses are at most 16 bytes",
    "tl.disable_shuffle_elect": "no shuffle election is emitted",
    "tl.disable_fast_math": "fast math is off unless tl.enable_fast_math is set",
    "tl.enable_auto_warp_specialization": None,  # only a problem when set; see below
}
# This compiler's own keys.
# This compiler's own keys, and their types, live in C++ (src/transform/pass_config.h).
OWN_KEYS = set(_ffi.pass_config_keys())


def normalize_pass_configs(pass_configs):
    """pass_configs with enum keys turned into strings and TileLang's keys into this compiler's; warns
    about accepted keys that have no effect here."""
    out = {}
    tilelang_keys = {k.value for k in PassConfigKey}
    for key, value in (pass_configs or {}).items():
        k = key.value if isinstance(key, PassConfigKey) else key
        if not isinstance(k, str):
            raise TileLangTypeError(f"a pass config key is a string or a tilelang.PassConfigKey, not {k!r}")
        if k.startswith("tirx."):
            k = "tir." + k[5:]
        if k in OWN_KEYS:
            out[k] = value
        elif k in _TRANSLATED:
            own, f = _TRANSLATED[k]
            out[own] = f(value)
        elif k in _ALWAYS_HOLDS and (_ALWAYS_HOLDS[k] is not None or not _truthy(value)):
            continue
        elif k in tilelang_keys:
            from ..log import warn

            warn(f"pass config '{k}' is accepted but not implemented by TileLang-C++; it has no effect")
        else:
            raise TileLangTypeError(f"unknown pass config key '{k}'; this compiler's keys are {sorted(OWN_KEYS)}, and "
                                    "TileLang's are listed in tilelang.PassConfigKey")
    _ffi.check_pass_configs({k: _as_text(v) for k, v in out.items()})  # types, checked once in C++
    return out


def _as_text(v):
    return ("1" if v else "0") if isinstance(v, bool) else str(v)


def apply_simplify(func, inline_let=False):
    """TileLang's `apply_simplify(prim_func)`: the function with its expressions simplified (the compiler's
    simplifier; it runs in every compile anyway). `inline_let` is accepted for TileLang's signature: lets are
    kept either way."""
    if not isinstance(func, _ffi.PrimFunc):
        raise TileLangTypeError(f"apply_simplify takes a @T.prim_func, got {type(func).__name__}")
    if inline_let:
        from ..log import warn

        warn("apply_simplify(inline_let=True) has no effect in TileLang-C++: the simplifier keeps lets")
    return _ffi.simplify_func(func)


def simplify_prim_func(factory):
    """TileLang's decorator: a factory whose returned @T.prim_func is simplified (apply_simplify)."""
    import functools

    @functools.wraps(factory)
    def wrapper(*args, **kwargs):
        return apply_simplify(factory(*args, **kwargs))

    return wrapper
