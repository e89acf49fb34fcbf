"""Triton kernels compiled for NVIDIA targets without a GPU, and a launcher that runs their PTX in this project's PTX
emulator (tilelang._ffi.emulate_ptx_text). Triton's PTX runs on real GPUs every day: agreement with NumPy checks
our PTX semantics on code we did not write. The kernels are textbook Triton (a tiled GEMM, a row softmax, a
FlashAttention forward), written here for these tests."""
import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import numpy as np  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from tilelang import _ffi  # noqa: E402


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, MASK: tl.constexpr):
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        if MASK:
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                        other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                        other=0.0)
        else:
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


@triton.jit
def flash_fwd(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # one (batch * head) slice per program_id(1), BM query rows per program_id(0); online softmax over key blocks
    base = tl.program_id(1) * S * D
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < S, other=0.0)
    m = tl.full((BM,), -float("inf"), tl.float32)
    lsum = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, S, BN):
        rn = start + tl.arange(0, BN)
        kt = tl.load(k_ptr + base + rn[None, :] * D + rd[:, None], mask=rn[None, :] < S, other=0.0)
        s = tl.dot(q, kt) * scale
        s = tl.where(rn[None, :] < S, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        lsum = lsum * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m = m_new
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], (acc / lsum[:, None]).to(tl.float16), mask=rm[:, None] < S)


def compile_ptx(fn, signature, constexprs, arch=80, num_warps=4, num_stages=3, aligned=()):
    """(ptx, metadata) of `fn` for GPUTarget("cuda", arch, 32); `aligned`: the argument indices Triton may assume
    16-divisible (what enables its vector loads and cp.async)."""
    attrs = {(i,): [["tt.divisibility", 16]] for i in aligned}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps,
                                                                         "num_stages": num_stages})
    return k.asm["ptx"], k.metadata


def run(ptx, md, grid, args, buffers):
    """Runs the kernel `md.name` of `ptx` over `grid` with `args` (arrays as their addresses, ints and floats as
    the kernel's 32-bit parameters), then Triton's two scratch pointers (null: these kernels use none). `buffers`:
    the arrays the kernel may touch, named for the bounds checks. Returns (reports, total)."""
    assert md.global_scratch_size == 0 and getattr(md, "profile_scratch_size", 0) == 0
    params = []
    for a in args:
        if isinstance(a, np.ndarray):
            params.append(a.ctypes.data)
        elif isinstance(a, float):
            params.append(int(np.float32(a).view(np.uint32)))
        else:
            params.append(int(a) & 0xFFFFFFFF)
    params += [0, 0]
    regions = [(a.ctypes.data, a.nbytes, name) for name, a in buffers.items()]
    reports, total, _ = _ffi.emulate_ptx_text(ptx, md.name, list(grid) + [1] * (3 - len(grid)),
                                              [md.num_warps * 32, 1, 1], md.shared, params, regions)
    return reports, total
