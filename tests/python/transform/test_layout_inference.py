"""LayoutInference: every fragment gets a layout (strict: gemm accumulators and operands,
reductions; then T.Parallel nests; then the free striped layout), recorded as
`T.attr(frag, "tl.layout", <fragment>)` on the kernel body, and every T.Parallel nest gets its
partition as the `tl.loop_layout` annotation. Compared by the layouts' descriptions; the rest of
the function must be unchanged."""
import re

import pytest
import tilelang
import tilelang.language as T
from tilelang import _ffi

from passes import run

LAYOUT = re.compile(r'T.attr\((\w+), "tl.layout", T.call_intrin\("handle", "fragment", "\w+", "([^"]*)"')
LOOP = re.compile(r'"tl.loop_layout": T.call_intrin\("handle", "fragment", "\w+", "([^"]*)"')


def facts(func):
    text = _ffi.print_func(func)
    return dict(LAYOUT.findall(text)), LOOP.findall(text)


def strip_facts(func):
    """The function without the facts this pass adds (what must be unchanged)."""
    lines = []
    for line in _ffi.print_func(func).splitlines():
        if '"tl.layout"' in line or re.match(r"\w+ = T.dynamic\(", line) or not line.strip():
            continue
        line = re.sub(r', annotations=\{"tl.loop_layout": .*\}\)', ")", line)
        lines.append(line)
    # bodies under the removed `with` lines lose one indent level each
    return "\n".join(l.strip() for l in lines)


def test_gemm_reduce_and_parallel_layouts():
    @T.prim_func
    def before(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), O: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((64, 32), "float16")
            Bs = T.alloc_shared((32, 64), "float16")
            C = T.alloc_fragment((64, 64), "float32")
            D = T.alloc_fragment((64, 64), "float32")
            m = T.alloc_fragment((64,), "float32")
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, C, clear_accum=True)
            for i, j in T.Parallel(64, 64):
                D[i, j] = C[i, j] * 2.0
            T.reduce_max(D, m, dim=1)
            T.copy(m, O)

    f = run("LegalizeTileOpsGPU", before)
    got = run("LayoutInference", f)
    layouts, loops = facts(got)
    assert layouts == {"C": "mma_C(64x64, warps 2x2)", "D": "mma_C(64x64, warps 2x2)", "m": "mma_rows(64, warps 2x2)"}
    # the element-wise nest over C/D, then the copy of m out (a nest over m's own layout)
    assert loops == ["mma_C(64x64, warps 2x2)", "mma_rows(64, warps 2x2)"]
    assert strip_facts(got) == strip_facts(f)


def test_free_layout_is_striped():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            F = T.alloc_fragment((64,), "float32")
            for i in T.Parallel(64):
                F[i] = A[i] * 2.0
            for i in T.Parallel(64):
                B[i] = F[i] + 1.0

    layouts, loops = facts(run("LayoutInference", run("LegalizeTileOpsGPU", before)))
    assert layouts == {"F": "striped(64, 32 threads, vec 4)"}
    assert loops == ["striped(64, 32 threads, vec 4)"] * 2


def test_conflict_names_both_ops():
    @T.prim_func
    def before(A: T.Tensor((32, 32), "float16"), B: T.Tensor((32, 32), "float16")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((32, 32), "float16")
            C = T.alloc_fragment((32, 32), "float32")
            T.copy(A, As)
            T.gemm(As, As, C)
            T.gemm(As, As, C, policy=T.GemmWarpPolicy.FullCol)

    with pytest.raises(tilelang.errors.TileLangLayoutError, match=r"layout conflict for fragment 'C': T.gemm "
                       r"accumulator at .*test_layout_inference.py:\d+ gives it mma_C\(32x32, warps 2x2\)"):
        run("LayoutInference", run("LegalizeTileOpsGPU", before))


def test_broadcast_fragment_waits_for_the_nests_layout():
    """A 1-D fragment written by its own nest and read as a row vector by a 2-D nest (TileLang's gated-delta
    backward: `g[i] = exp(G[i])`, then `q[i, k] *= g[i]`). Before: the free striped layout went to the 1-D
    fragment first (allocated first), and the 2-D nest then conflicted with it. Expected: the 2-D nest's own
    fragment gets the free layout, and the row vector the broadcast layout (whole in every thread), which its
    own nest then runs on."""
    @T.prim_func
    def before(G: T.Tensor((64,), "float32"), Q: T.Tensor((64, 32), "float32"), O: T.Tensor((64, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            g = T.alloc_fragment((64,), "float32")
            q = T.alloc_fragment((64, 32), "float32")
            T.copy(Q, q)
            for i in T.Parallel(64):
                g[i] = T.exp(G[i])
            for i, k in T.Parallel(64, 32):
                q[i, k] = q[i, k] * g[i]
            T.copy(q, O)

    f = run("LegalizeTileOpsGPU", before)
    got = run("LayoutInference", f)
    layouts, loops = facts(got)
    assert layouts == {"g": "replicated(64)", "q": "striped(64x32, 128 threads, vec 4)"}
    # the copy in, the row vector's own nest (whole in every thread), the 2-D nest, the copy out
    assert loops == ["striped(64x32, 128 threads, vec 4)", "replicated(64)"] + ["striped(64x32, 128 threads, vec 4)"] * 2
    assert strip_facts(got) == strip_facts(f)


@pytest.mark.parametrize("where", ["cpu", "cuda", "hip", "metal"])
def test_broadcast_fragment_numerics(where):
    import numpy as np

    S, D = 48, 32

    @T.prim_func
    def k(G: T.Tensor((S,), "float32"), Q: T.Tensor((S, D), "float32"), O: T.Tensor((S, D), "float32")):
        with T.Kernel(1, threads=128) as bx:
            G_s = T.alloc_shared((S,), "float32")
            g = T.alloc_fragment((S,), "float32")
            q = T.alloc_fragment((S, D), "float32")
            T.copy(G, G_s)
            T.copy(Q, q)
            for i in T.Parallel(S):
                g[i] = T.exp(G_s[i])
            for i, j in T.Parallel(S, D):
                q[i, j] = q[i, j] * g[i]
            T.copy(q, O)

    seed = 77
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    gv = rng.standard_normal(S).astype(np.float32)
    qv = rng.standard_normal((S, D)).astype(np.float32)
    o = np.zeros((S, D), np.float32)
    opts = {"target": "cpu"} if where == "cpu" else {"target": where, "execution_backend": "emulator"}
    tilelang.compile(k, **opts)(gv, qv, o)
    np.testing.assert_allclose(o, qv.astype(np.float64) * np.exp(gv.astype(np.float64))[:, None], rtol=1e-5)


def test_transposing_nest_takes_the_layout_of_the_transposed_fragment():
    """`q_t[k, i] = q[i, k]` where q_t is a gemm's register A operand and q has no layout of its own yet
    (TileLang's gated-delta-net backward). Before: q got a free layout and the nest conflicted with q_t's.
    Expected: the nest runs each element where q_t holds it, and q takes that placement (q_t's layout with
    its dimensions swapped)."""
    @T.prim_func
    def before(Q: T.Tensor((64, 32), "float16"), D: T.Tensor((64, 32), "float16"), O: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            d_s = T.alloc_shared((64, 32), "float16")
            q = T.alloc_fragment((64, 32), "float16")
            q_t = T.alloc_fragment((32, 64), "float16")
            acc = T.alloc_fragment((32, 32), "float32")
            T.copy(Q, q)
            T.copy(D, d_s)
            for i, k in T.Parallel(64, 32):
                q_t[k, i] = q[i, k]
            T.gemm(q_t, d_s, acc, clear_accum=True)
            T.copy(acc, O)

    f = run("LegalizeTileOpsGPU", before)
    got = run("LayoutInference", f)
    layouts, loops = facts(got)
    assert layouts["q_t"] == "mma_A(32x64, warps 2x2, 2 replicas)"
    assert layouts["q"] == "reordered(1,0 of mma_A(32x64, warps 2x2, 2 replicas))"
    assert loops[0] == loops[1] == layouts["q"]  # the copy into q and the transposing nest
    assert strip_facts(got) == strip_facts(f)


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_transposed_fragments_numerics(target):
    import numpy as np

    S, DK, DV = 64, 32, 32

    @T.prim_func
    def qt_do(Q: T.Tensor((S, DK), "float16"), dO: T.Tensor((DV, S), "float16"), Out: T.Tensor((DK, DV), "float32")):
        with T.Kernel(1, threads=128) as bx:
            do_s = T.alloc_shared((DV, S), "float16")
            q = T.alloc_fragment((S, DK), "float16")
            q_t = T.alloc_fragment((DK, S), "float16")
            acc = T.alloc_fragment((DK, DV), "float32")
            T.copy(Q, q)
            T.copy(dO, do_s)
            for i, k in T.Parallel(S, DK):
                q[i, k] = q[i, k] * 0.5
            for i, k in T.Parallel(S, DK):
                q_t[k, i] = q[i, k]
            T.gemm(q_t, do_s, acc, transpose_B=True, clear_accum=True)
            T.copy(acc, Out)

    @T.prim_func
    def colsum(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), Out: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((64, 64), "float16")
            b_s = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            acc_t = T.alloc_fragment((64, 64), "float32")
            s = T.alloc_fragment((64,), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.gemm(a_s, b_s, acc, transpose_B=True, clear_accum=True)
            for i, j in T.Parallel(64, 64):
                acc_t[j, i] = acc[i, j]
            T.reduce_sum(acc_t, s, dim=1)
            T.copy(s, Out)

    seed = 808
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((S, DK)).astype(np.float16)
    do = rng.standard_normal((DV, S)).astype(np.float16)
    out = np.zeros((DK, DV), np.float32)
    tilelang.compile(qt_do, target=target, execution_backend="emulator")(q, do, out)
    ref = (0.5 * q.astype(np.float64)).T @ do.astype(np.float64).T
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    o = np.zeros(64, np.float32)
    tilelang.compile(colsum, target=target, execution_backend="emulator")(a, b, o)
    np.testing.assert_allclose(o, (a.astype(np.float64) @ b.astype(np.float64).T).sum(0), rtol=1e-3, atol=1e-2)
