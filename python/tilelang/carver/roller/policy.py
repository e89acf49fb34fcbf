"""GEMM tilings ranked by a small cost model of this compiler's own (not TileLang's roller algorithm).

Candidates: block tiles M x N from 16 to 256 (powers of two, not past the problem rounded up), warp tiles
that the matrix unit can split (multiples of 16 x 16), a K step of 16-128 (a multiple of the instruction's
K: 32 bytes of operand), at most 256 threads and 128 accumulator registers per thread, and as many shared
memory stages (up to 4, at most the number of K steps) as fit the architecture's shared memory.

Cost of a candidate, in units of the architecture's compute: the busiest SM's share of the padded work
(ceil(blocks / SMs) x block M x N x K), slowed when too few warps are resident to keep the matrix unit busy,
against the operand traffic of the whole grid ((M-tile + N-tile) x K bytes per block) at a fixed
compute-to-bandwidth ratio; the larger of the two, times 1.3 without a pipeline (one stage) and 1.1 with two
stages; on a tie, larger tiles, then a K step of 64 bytes."""
import math

from .hint import Hint, IntrinInfo
from .rasterization import NoRasterization, Rasterization2DRow

_FLOPS_PER_BYTE = 64.0  # compute per byte of L2 traffic at which a GEMM turns from bandwidth- to compute-bound
_DEFAULT_SMS = {70: 80, 75: 40, 80: 108, 86: 84, 87: 16, 89: 128, 90: 132, 100: 148, 120: 84}


def _dtype_bytes(dtype):
    name = str(dtype)
    if name.startswith("float8") or name in ("int8", "uint8", "bool", "float6_e2m3fn", "float6_e3m2fn"):
        return 1.0
    if name in ("int4", "uint4", "float4_e2m1fn"):
        return 0.5
    if name in ("float16", "bfloat16", "int16", "uint16"):
        return 2.0
    if name in ("float64", "int64", "uint64"):
        return 8.0
    return 4.0


def _pow2_upto(limit, lo=16, hi=256):
    out, v = [], lo
    while v <= hi and v <= max(lo, limit):
        out.append(v)
        v *= 2
    return out


def _sm_count(arch):
    n = getattr(arch, "compute_max_core", None)
    if n:
        return int(n)
    return _DEFAULT_SMS.get(getattr(arch, "sm_version", 80), 108) if getattr(arch, "platform", "") == "CUDA" else 104


def matmul_hints(M, N, K, arch, in_dtype="float16", accum_dtype="float32", topk=10, trans_b=True):
    """Up to ``topk`` Hints for C[M, N] = A[M, K] x B (B as [N, K] when trans_b), best first."""
    M, N, K, topk = int(M), int(N), int(K), int(topk)
    if min(M, N, K) <= 0 or topk <= 0:
        raise ValueError(f"matmul_hints needs positive M, N, K and topk, got {M}, {N}, {K}, {topk}")
    elem = _dtype_bytes(in_dtype)
    acc = _dtype_bytes(accum_dtype)
    warp = int(getattr(arch, "warp_size", 32))
    max_threads = min(int(getattr(arch, "max_threads", 1024)), 256 if warp == 32 else 512)
    smem_cap = int(getattr(arch, "smem_cap", 48 * 1024))
    sms = _sm_count(arch)
    k_unit = max(16, int(32 / elem))  # one mma instruction's K: 32 bytes of an operand row
    cands = []
    for bm in _pow2_upto(M):
        for bn in _pow2_upto(N):
            for bk in [k for k in (16, 32, 64, 128) if k % k_unit == 0 and k <= max(k_unit, 1 << (K - 1).bit_length())]:
                stage = (bm + bn) * bk * elem
                ksteps = -(-K // bk)
                stages = next((s for s in (4, 3, 2, 1) if s <= max(1, ksteps) and s * stage <= smem_cap), None)
                if stages is None:
                    continue
                for wm in (16, 32, 64):
                    for wn in (16, 32, 64):
                        if bm % wm or bn % wn:
                            continue
                        threads = (bm // wm) * (bn // wn) * warp
                        if threads > max_threads or threads < warp:
                            continue
                        regs = bm * bn * acc / 4 / threads
                        if regs > 128:
                            continue
                        cands.append(_score(M, N, K, bm, bn, bk, wm, wn, threads, stages, stage, regs, elem,
                                            sms, smem_cap, warp))
    # ties: larger tiles, then a K step of 64 bytes of operand (fewer stages' worth of shared memory), fewer threads
    cands.sort(key=lambda c: (round(c[0], 9), -c[1]["bm"] * c[1]["bn"], abs(c[1]["bk"] * elem - 64), c[1]["threads"]))
    hints, seen = [], set()
    for cost, c in cands:
        key = (c["bm"], c["bn"], c["bk"], c["wm"], c["wn"])
        if key in seen:
            continue
        seen.add(key)
        h = Hint()
        h.arch = arch
        h.block, h.warp, h.rstep = [c["bm"], c["bn"]], [c["wm"], c["wn"]], [c["bk"]]
        h.thread = [c["bm"] // c["wm"], c["bn"] // c["wn"]]
        h.threads, h.pipeline_stage, h.smem_bytes = c["threads"], c["stages"], int(c["stages"] * c["stage"])
        h.use_async = c["stages"] > 1
        gm, gn = -(-M // c["bm"]), -(-N // c["bn"])
        h.rasterization_plan = Rasterization2DRow(10) if gm * gn > 2 * sms and min(gm, gn) >= 4 else NoRasterization()
        h.intrin_info = IntrinInfo(in_dtype, accum_dtype, trans_b)
        h.score = cost
        hints.append(h)
        if len(hints) == topk:
            break
    return hints


def _score(M, N, K, bm, bn, bk, wm, wn, threads, stages, stage, regs, elem, sms, smem_cap, warp):
    gm, gn, ksteps = -(-M // bm), -(-N // bn), -(-K // bk)
    grid = gm * gn
    per_sm_limit = max(1, min(smem_cap // int(stages * stage), 2048 // threads,
                              65536 // int(threads * (regs + 40))))
    resident = min(-(-grid // sms), per_sm_limit)  # blocks on the busiest SM at once
    warps = resident * threads // warp
    busy = min(1.0, warps / 4.0)  # the matrix unit wants about four warps resident per SM
    compute = -(-grid // sms) * bm * bn * ksteps * bk / busy
    traffic = grid * (bm + bn) * ksteps * bk * elem * _FLOPS_PER_BYTE / sms / 2
    hide = {1: 1.3, 2: 1.1}.get(stages, 1.0)  # copies not overlapped with the math without a pipeline
    cost = max(compute, traffic) * hide / (M * N * K / sms)  # 1.0 = the whole machine busy, no padding
    return cost, {"bm": bm, "bn": bn, "bk": bk, "wm": wm, "wn": wn, "threads": threads, "stages": stages,
                  "stage": stage}
