"""A generator of random, valid tile programs and a differential runner: every program runs on the
CPU backend and on the CUDA emulator (sm_80 and sm_90a lowerings), and all are compared with a NumPy
reference computed in float64 (integers: exactly, with the documented wrap-around semantics).

Program families: elementwise expressions (direct global access, or staged through shared and
fragment tiles with ragged tails), row reductions, GEMMs (every transpose, warp policy and stage
count), cumulative sums and softmax, over ragged sizes and several dtypes. Everything is drawn from
one `random.Random(seed)`, so a seed reproduces its program exactly (`python tests/fuzz/run_fuzz.py
--seed S --count 1 --show`).
"""
import os
import random
import sys
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import kernels as K  # noqa: E402
import tilelang  # noqa: E402
import tilelang.errors  # noqa: E402
from tilelang.language.parser import parse_source  # noqa: E402

_FLOAT_TOL = {"float32": (1e-4, 1e-4), "float16": (2e-2, 2e-2), "bfloat16": (8e-2, 8e-2)}
# relative closeness at which a float comparison may go either way after the kernel's per-step rounding
_SELECT_TIE = {"float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32}


def _np_dtype(name):
    import ml_dtypes

    return np.dtype({"bfloat16": ml_dtypes.bfloat16}.get(name, name))


def _wrap(v, dtype):
    bits = _INT_BITS[dtype]
    return ((v + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))


class Case:
    """One generated program: DSL source (or a kernel factory call), inputs and the reference."""

    def __init__(self, kind, seed, func, source, inputs, outputs, reference, tol, pass_configs=None):
        self.kind, self.seed, self.func, self.source = kind, seed, func, source
        self.inputs, self.outputs, self.reference, self.tol = inputs, outputs, reference, tol
        self.pass_configs = pass_configs or {}

    def describe(self):
        return f"[seed {self.seed}] {self.kind}\n{self.source}"


# ---- elementwise expressions ------------------------------------------------------------------
def _expr(rng, dtype, depth, leaves):
    """(DSL text, reference function of the leaf arrays) for a random expression."""
    is_int = dtype in _INT_BITS
    if depth == 0 or rng.random() < 0.25:
        r = rng.random()
        if r < 0.8:
            name = rng.choice(leaves)
            return name, (lambda env, n=name: env[n])
        c = rng.randint(-9, 9) if is_int else round(rng.uniform(-2, 2), 3)
        return repr(c), (lambda env, c=c: np.full_like(env[leaves[0]], c))
    ops = ["+", "-", "*", "max", "min", "select"]
    if is_int:
        ops += ["//", "%"]
    else:
        ops += ["abs"]
    op = rng.choice(ops)
    a_txt, a = _expr(rng, dtype, depth - 1, leaves)
    if op == "abs":
        return f"T.abs({a_txt})", (lambda env: np.abs(a(env)))
    if op in ("//", "%"):
        d = rng.choice([2, 3, 4, 7, 16, -3])
        f = (lambda x, d=d: x // d) if op == "//" else (lambda x, d=d: x % d)
        txt = f"({a_txt} {op} {d})"
        return txt, (lambda env: _int_fix(f(a(env)), dtype))
    b_txt, b = _expr(rng, dtype, depth - 1, leaves)

    def literal(t):
        try:
            return isinstance(eval(t, {}), (int, float))
        except Exception:
            return False

    # T.min / T.max / T.if_then_else of literals only is a typed constant (int32 or float32, as in
    # TileLang), not a literal that takes the other operand's dtype: the arithmetic around it would
    # then run at 32 bits while the reference wraps at the tensor's dtype. Fold it into a literal.
    if op in ("max", "min") and literal(a_txt) and literal(b_txt):
        v = (max if op == "max" else min)(eval(a_txt, {}), eval(b_txt, {}))
        return repr(v), (lambda env, v=v: np.full_like(env[leaves[0]], v))
    if op == "select":
        c_txt, c = _expr(rng, dtype, depth - 1, leaves)
        if literal(a_txt) and literal(b_txt) and literal(c_txt):
            v = eval(c_txt, {}) if eval(a_txt, {}) > eval(b_txt, {}) else eval(b_txt, {})
            return repr(v), (lambda env, v=v: np.full_like(env[leaves[0]], v))
        txt = f"T.if_then_else({a_txt} > {b_txt}, {c_txt}, {b_txt})"
        if is_int:
            return txt, (lambda env: np.where(a(env) > b(env), c(env), b(env)))
        # The kernel compares values rounded to the dtype at every step, the reference exact ones: where the two
        # sides are that close, either branch is right, so the reference has no value there (NaN: _close skips it,
        # and arithmetic on it stays NaN).
        eps = _SELECT_TIE[dtype]

        def pick(env):
            x, y = a(env), b(env)
            # an unknown side (NaN: an inner select's tie) leaves the comparison unknown too
            tie = np.isnan(x) | np.isnan(y) | (np.abs(x - y) <= eps * (np.abs(x) + np.abs(y)) + eps)
            return np.where(tie, np.nan, np.where(x > y, c(env), y))
        return txt, pick
    if op in ("max", "min"):
        fn = np.maximum if op == "max" else np.minimum
        return f"T.{op}({a_txt}, {b_txt})", (lambda env: fn(a(env), b(env)))
    f = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
    return f"({a_txt} {op} {b_txt})", (lambda env: _int_fix(f(a(env), b(env)), dtype) if is_int else f(a(env), b(env)))


def _int_fix(v, dtype):
    return _wrap(v, dtype) if dtype in _INT_BITS else v


def _inputs(rng, dtype, shape, nprng):
    if dtype in _INT_BITS:
        lim = 100 if dtype == "int8" else 1000
        return nprng.integers(-lim, lim, shape).astype(dtype)
    return nprng.uniform(-2, 2, shape).astype(_np_dtype(dtype))


def elementwise(seed):
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    dtype = rng.choice(["float32", "float32", "float16", "bfloat16", "int32", "int8"])
    n = rng.choice([1, 7, 100, 129, 255, 256, 500, 1000])
    blk = rng.choice([32, 64, 128, 256])
    staged = rng.random() < 0.5
    dynamic = rng.random() < 0.5
    txt, ref = _expr(rng, dtype, rng.randint(1, 4), ["a", "b"])
    size = "n" if dynamic else str(n)
    header = 'n = T.dynamic("n")\n' if dynamic else ""
    if staged:
        body = (f"        A_s = T.alloc_shared(({blk},), \"{dtype}\")\n"
                f"        B_f = T.alloc_fragment(({blk},), \"{dtype}\")\n"
                f"        O_f = T.alloc_fragment(({blk},), \"{dtype}\")\n"
                f"        T.copy(A[bx * {blk}], A_s)\n"
                f"        T.copy(B[bx * {blk}], B_f)\n"
                f"        for i in T.Parallel({blk}):\n"
                f"            a = A_s[i]\n"
                f"            b = B_f[i]\n"
                f"            O_f[i] = {txt}\n"
                f"        T.copy(O_f, O[bx * {blk}])\n")
    else:
        body = (f"        for i in T.Parallel({blk}):\n"
                f"            if bx * {blk} + i < {size}:\n"
                f"                a = A[bx * {blk} + i]\n"
                f"                b = B[bx * {blk} + i]\n"
                f"                O[bx * {blk} + i] = {txt}\n")
    source = (f"import tilelang.language as T\n{header}\n\n@T.prim_func\n"
              f"def fuzz_elementwise(A: T.Tensor(({size},), \"{dtype}\"), B: T.Tensor(({size},), \"{dtype}\"),\n"
              f"                     O: T.Tensor(({size},), \"{dtype}\")):\n"
              f"    with T.Kernel(T.ceildiv({size}, {blk}), threads=128) as bx:\n" + body)
    a, b = _inputs(rng, dtype, n, nprng), _inputs(rng, dtype, n, nprng)
    if dtype in _INT_BITS:
        env = {"a": a.astype(np.int64), "b": b.astype(np.int64)}
        want = _wrap(ref(env), dtype)
    else:
        # The kernel rounds each `a`/`b` once (they are inputs of the dtype) and computes in float.
        env = {"a": a.astype(np.float64), "b": b.astype(np.float64)}
        want = ref(env)
    # Staged tails read never-written shared memory in lanes whose results are not stored.
    cfg = {"emulator.check_uninit": False} if staged and n % blk else {}
    return Case("elementwise" + (" staged" if staged else "") + (" dynamic" if dynamic else ""), seed,
                parse_source(source), source, [a, b], [np.zeros(n, _np_dtype(dtype))], [want],
                _FLOAT_TOL.get(dtype, (0, 0)), cfg)


# ---- row reductions ----------------------------------------------------------------------------
def reduction(seed):
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    dtype = rng.choice(["float32", "float16"])
    kind = rng.choice(["sum", "max", "min", "abssum", "absmax"])
    bm = rng.choice([4, 8, 16])
    m = rng.choice([8, 16, 40, 64, 100])
    n = rng.choice([32, 64, 128])
    source = (f"import tilelang.language as T\n\n\n@T.prim_func\n"
              f"def fuzz_reduce(A: T.Tensor(({m}, {n}), \"{dtype}\"), O: T.Tensor(({m},), \"float32\")):\n"
              f"    with T.Kernel(T.ceildiv({m}, {bm}), threads=128) as bx:\n"
              f"        X = T.alloc_fragment(({bm}, {n}), \"float32\")\n"
              f"        R = T.alloc_fragment(({bm},), \"float32\")\n"
              f"        T.copy(A[bx * {bm}, 0], X)\n"
              f"        T.reduce_{kind}(X, R, dim=1)\n"
              f"        T.copy(R, O[bx * {bm}])\n")
    a = _inputs(rng, dtype, (m, n), nprng)
    x = a.astype(np.float64)
    want = {"sum": x.sum(1), "max": x.max(1), "min": x.min(1), "abssum": np.abs(x).sum(1),
            "absmax": np.abs(x).max(1)}[kind]
    cfg = {"emulator.check_uninit": False} if m % bm else {}
    return Case(f"reduce_{kind}", seed, parse_source(source), source, [a], [np.zeros(m, np.float32)], [want],
                (1e-3, 1e-3), cfg)


# ---- GEMM --------------------------------------------------------------------------------------
def gemm(seed):
    import tilelang.language as T

    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    dtype = rng.choice(["float16", "bfloat16"])
    ta, tb = rng.random() < 0.5, rng.random() < 0.5
    bm, bn = rng.choice([(64, 64), (64, 128), (128, 64), (32, 64)])
    bk = rng.choice([16, 32])
    m = rng.choice([bm, 2 * bm, bm + 16, 2 * bm - 32])
    n = rng.choice([bn, 2 * bn, bn + 8 * rng.randint(1, 4)])
    k = rng.choice([bk, 2 * bk, 4 * bk])
    stages = rng.choice([0, 1, 2, 3])
    threads = rng.choice([128, 256]) if bm * bn >= 128 * 64 else 128
    warps = threads // 32
    # Valid splits only: each warp's share of the accumulator must be whole 16x8 mma tiles.
    policies = ["Square"] + (["FullRow"] if bm % (16 * warps) == 0 else []) + (["FullCol"] if bn % (8 * warps) == 0 else [])
    policy = rng.choice(policies)
    call = (f"K.matmul_transposed({m}, {n}, {k}, {bm}, {bn}, {bk}, trans_A={ta}, trans_B={tb}, dtype={dtype!r}, "
            f"accum_dtype='float32', out_dtype='float32', num_stages={stages}, threads={threads}, "
            f"policy=T.GemmWarpPolicy.{policy})")
    func = K.matmul_transposed(m, n, k, bm, bn, bk, trans_A=ta, trans_B=tb, dtype=dtype, accum_dtype="float32",
                               out_dtype="float32", num_stages=stages, threads=threads,
                               policy=getattr(T.GemmWarpPolicy, policy))
    a = nprng.standard_normal((k, m) if ta else (m, k)).astype(_np_dtype(dtype))
    b = nprng.standard_normal((n, k) if tb else (k, n)).astype(_np_dtype(dtype))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = (a64.T if ta else a64) @ (b64.T if tb else b64)
    return Case("gemm", seed, func, call, [a, b], [np.zeros((m, n), np.float32)], [want], (2e-2, 2e-2))


# ---- cumsum and softmax ------------------------------------------------------------------------
def cumsum(seed):
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    bm, bn = rng.choice([(32, 32), (16, 64), (64, 16)])
    m, n = bm * rng.randint(1, 3), bn * rng.randint(1, 3)
    dim, reverse = rng.choice([0, 1]), rng.random() < 0.5
    scope = rng.choice(["shared", "fragment"])
    call = f"K.cumsum({m}, {n}, {bm}, {bn}, dim={dim}, reverse={reverse}, scope={scope!r})"
    func = K.cumsum(m, n, bm, bn, dim=dim, reverse=reverse, scope=scope)
    a = nprng.standard_normal((m, n)).astype(np.float32)
    x = a.astype(np.float64)
    want = np.zeros_like(x)
    for r in range(0, m, bm):
        for c in range(0, n, bn):
            t = x[r:r + bm, c:c + bn]
            t = np.flip(t, dim) if reverse else t
            s = np.cumsum(t, axis=dim)
            want[r:r + bm, c:c + bn] = np.flip(s, dim) if reverse else s
    return Case("cumsum", seed, func, call, [a], [np.zeros((m, n), np.float32)], [want], (1e-4, 1e-4))


def softmax(seed):
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    bm = rng.choice([4, 8])
    m, n = bm * rng.randint(1, 8), rng.choice([32, 64, 128])
    call = f"K.softmax({m}, {n}, {bm})"
    func = K.softmax(m, n, bm)
    a = (nprng.standard_normal((m, n)) * 3).astype(np.float32)
    x = a.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    return Case("softmax", seed, func, call, [a], [np.zeros((m, n), np.float32)], [e / e.sum(1, keepdims=True)],
                (1e-5, 1e-5))


# ---- views: a flat tensor seen as a matrix, tiles through shared memory ------------------------------
def views(seed):
    """A (m * n,) tensor read through T.reshape as (m, n) (a parameter view, or a view beside direct uses
    of the owner), tiled (bm, bn) with ragged m, n, through a shared tile that is itself read through a
    1-D view; a random element-wise expression; the output written through a T.Tensor(..., data=) view."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    dtype = rng.choice(["float32", "float16", "int32"])
    bm, bn = rng.choice([(8, 32), (16, 16), (32, 8), (4, 64)])
    m, n = rng.choice([bm, 2 * bm + 3, 5 * bm - 1]), rng.choice([bn, bn + 5, 3 * bn - 2])
    direct = rng.random() < 0.5  # also read A directly: the accesses are remapped, not the parameter
    txt, ref = _expr(rng, dtype, rng.randint(1, 3), ["a", "b"])
    b_src = f"A[(by * {bm} + i) * {n} + bx * {bn} + j]" if direct else f"A2[by * {bm} + i, bx * {bn} + j]"
    source = (f"import tilelang.language as T\n\n\n@T.prim_func\n"
              f"def fuzz_views(A: T.Tensor(({m * n},), \"{dtype}\"), O: T.Tensor(({m * n},), \"{dtype}\")):\n"
              f"    with T.Kernel(T.ceildiv({n}, {bn}), T.ceildiv({m}, {bm}), threads=128) as (bx, by):\n"
              f"        A2 = T.reshape(A, ({m}, {n}))\n"
              f"        O2 = T.Tensor(({m}, {n}), \"{dtype}\", O.data)\n"
              f"        S = T.alloc_shared(({bm}, {bn}), \"{dtype}\")\n"
              f"        S1 = T.reshape(S, ({bm * bn},))\n"
              f"        T.copy(A2[by * {bm}, bx * {bn}], S)\n"
              f"        for i, j in T.Parallel({bm}, {bn}):\n"
              f"            if by * {bm} + i < {m} and bx * {bn} + j < {n}:\n"
              f"                a = S1[i * {bn} + j]\n"
              f"                b = {b_src}\n"
              f"                O2[by * {bm} + i, bx * {bn} + j] = {txt}\n")
    a = _inputs(rng, dtype, m * n, nprng)
    if dtype in _INT_BITS:
        want = _wrap(ref({"a": a.astype(np.int64), "b": a.astype(np.int64)}), dtype)
    else:
        want = ref({"a": a.astype(np.float64), "b": a.astype(np.float64)})
    cfg = {"emulator.check_uninit": False} if m % bm or n % bn else {}
    return Case("views" + (" direct" if direct else ""), seed, parse_source(source), source, [a],
                [np.zeros(m * n, _np_dtype(dtype))], [want], _FLOAT_TOL.get(dtype, (0, 0)), cfg)


# ---- per-thread code: thread indices, user barriers, run-time while ----------------------------------
def per_thread(seed):
    """A shared-memory tree sum per row written with T.get_thread_binding and T.sync_threads (threads and
    row length random, ragged), a run-time while loop counting down a per-row count read from memory, and a
    workspace (T.alloc_global) holding the per-row partial results."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    threads = rng.choice([32, 64, 128])
    m, n = rng.choice([1, 3, 7]), rng.choice([threads, threads - 5, threads // 2 + 1])
    steps = []
    s = threads // 2
    while s >= 1:
        steps.append(s)
        s //= 2
    source = (f"import tilelang.language as T\n\n\n@T.prim_func\n"
              f"def fuzz_per_thread(A: T.Tensor(({m}, {n}), \"float32\"), R: T.Tensor(({m},), \"int32\"),\n"
              f"                    O: T.Tensor(({m},), \"float32\")):\n"
              f"    with T.Kernel({m}, threads={threads}) as bx:\n"
              f"        tx = T.get_thread_binding()\n"
              f"        S = T.alloc_shared(({threads},), \"float32\")\n"
              f"        W = T.alloc_global(({m},), \"float32\")\n"
              f"        r = T.alloc_var(\"int32\", init=0)\n"
              f"        if tx < {n}:\n"
              f"            S[tx] = A[bx, tx]\n"
              f"        else:\n"
              f"            S[tx] = 0.0\n"
              f"        T.sync_threads()\n"
              f"        for s in {steps}:\n"
              f"            if tx < s:\n"
              f"                S[tx] = S[tx] + S[tx + s]\n"
              f"            T.sync_threads()\n"
              f"        r = R[bx]\n"
              f"        W[bx] = S[0]\n"
              f"        while r > 0:\n"
              f"            W[bx] = W[bx] * 0.5\n"
              f"            r = r - 1\n"
              f"        O[bx] = W[bx]\n")
    a = _inputs(rng, "float32", (m, n), nprng)
    counts = nprng.integers(0, 4, m).astype(np.int32)
    want = a.astype(np.float64).sum(1) * 0.5 ** counts
    return Case(f"per_thread {threads}", seed, parse_source(source), source, [a, counts],
                [np.zeros(m, np.float32)], [want], (1e-4, 1e-4))


# ---- tile copies at negative and overhanging corners -------------------------------------------------
def copy_corners(seed):
    """Each block copies its (bm, bn) tile of A through shared memory into O at a corner that starts
    before the tensor (a negative row in block 0, a negative column from a run-time scalar) or overhangs
    its end: elements outside O are dropped, nothing is written outside it."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    dtype = rng.choice(["float32", "float16", "int32"])
    bm, bn = rng.choice([(8, 16), (16, 8), (16, 32), (4, 64)])
    blocks = rng.choice([1, 2, 3])
    dr = rng.choice([-(bm - 1), -3, -1, 0, 2, bm // 2])
    dc = rng.choice([-(bn - 1), -5, -1, 0, 3, bn // 2])
    sc = rng.choice([0, 1, bn // 2])
    m, n = blocks * bm + rng.choice([-(bm // 2), 0, 3]), bn + rng.choice([-(bn // 2), 0, 5])
    source = (f"import tilelang.language as T\n\n\n@T.prim_func\n"
              f"def fuzz_corners(A: T.Tensor(({blocks * bm}, {bn + sc}), \"{dtype}\"), c0: T.int32,\n"
              f"                 O: T.Tensor(({m}, {n}), \"{dtype}\")):\n"
              f"    with T.Kernel({blocks}, threads=128) as bx:\n"
              f"        S = T.alloc_shared(({bm}, {bn}), \"{dtype}\")\n"
              f"        T.copy(A[bx * {bm}, {sc}], S)\n"
              f"        T.copy(S, O[bx * {bm} + {dr}, c0])\n")
    a = _inputs(rng, dtype, (blocks * bm, bn + sc), nprng)
    want = np.zeros((m, n), np.float64)
    for b in range(blocks):
        for i in range(bm):
            for j in range(bn):
                r, c = b * bm + dr + i, dc + j
                if 0 <= r < m and 0 <= c < n:
                    want[r, c] = float(a[b * bm + i, sc + j])
    return Case(f"copy_corners {bm}x{bn} at ({dr}, {dc})", seed, parse_source(source), source,
                [a, np.int32(dc)], [np.zeros((m, n), _np_dtype(dtype))], [want], (0, 0))


# ---- large per-thread fragments ---------------------------------------------------------------------------
def big_fragments(seed):
    """Fragments holding many elements per thread: a T.cumsum along a random axis (along the first axis every
    thread keeps the whole tile, up to 2048 elements) and a row reduction of a (M, N) fragment. The
    per-thread code must stay a size the backend compilers handle (bounded unrolling). Blocks of 32 and 128
    threads: the reduction lowering still unrolls over every element a thread holds, so a 1-thread block
    with a large tile compiles slowly (docs/status.md)."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    threads = rng.choice([32, 128])
    m, n = rng.choice([(16, 48), (32, 64), (8, 128), (64, 16)])
    dim = rng.choice([0, 1])
    reverse = rng.random() < 0.3
    kind = rng.choice(["sum", "max"])
    source = (f"import tilelang.language as T\n\n\n@T.prim_func\n"
              f"def fuzz_big_fragments(A: T.Tensor(({m}, {n}), \"float32\"), S: T.Tensor(({m}, {n}), \"float32\"),\n"
              f"                       R: T.Tensor(({m},), \"float32\")):\n"
              f"    with T.Kernel(1, threads={threads}) as bx:\n"
              f"        F = T.alloc_fragment(({m}, {n}), \"float32\")\n"
              f"        G = T.alloc_fragment(({m}, {n}), \"float32\")\n"
              f"        r = T.alloc_fragment(({m},), \"float32\")\n"
              f"        T.copy(A, F)\n"
              f"        T.copy(A, G)\n"
              f"        T.reduce_{kind}(G, r, dim=1)\n"
              f"        T.cumsum(F, dim={dim}, reverse={reverse})\n"
              f"        T.copy(F, S)\n"
              f"        T.copy(r, R)\n")
    a = _inputs(rng, "float32", (m, n), nprng)
    x = a.astype(np.float64)
    scan = np.flip(np.cumsum(np.flip(x, dim), dim), dim) if reverse else np.cumsum(x, dim)
    red = x.sum(1) if kind == "sum" else x.max(1)
    return Case(f"big_fragments {m}x{n} threads={threads} cumsum dim={dim}", seed, parse_source(source), source,
                [a], [np.zeros((m, n), np.float32), np.zeros(m, np.float32)], [scan, red], (1e-4, 1e-3))


FAMILIES = [(elementwise, 5), (reduction, 2), (gemm, 2), (cumsum, 1), (softmax, 1), (views, 1), (per_thread, 1),
            (copy_corners, 1), (big_fragments, 1)]


def generate(seed):
    rng = random.Random(seed * 7919 + 1)
    fams = [f for f, w in FAMILIES for _ in range(w)]
    return rng.choice(fams)(seed)


# ---- differential run --------------------------------------------------------------------------
def _close(got, want, tol):
    got = np.asarray(got).astype(np.float64)
    rtol, atol = tol
    if rtol == 0 and atol == 0:
        return np.array_equal(got, want), "exact"
    known = ~np.isnan(want)  # NaN: a comparison the rounding may decide either way (_expr's select)
    got, want = got[known], want[known]
    ok = np.allclose(got, want, rtol=rtol, atol=atol + rtol * float(np.max(np.abs(want), initial=0)) * 0.0)
    return ok, f"max abs err {float(np.max(np.abs(got - want), initial=0)):.3g}"


def run_case(case):
    """Runs `case` on the CPU and the emulator; returns a list of failure messages (empty: agreed)."""
    failures = []
    targets = [("cpu", dict(target="cpu")),
               ("emulator", dict(target="cuda -arch=sm_80", execution_backend="emulator")),
               ("emulator sm_90a", dict(target="cuda -arch=sm_90a", execution_backend="emulator"))]  # wgmma
    for name, kw in targets:
        try:
            with warnings.catch_warnings():  # performance notes (no cp.async for ragged rows) are expected
                warnings.simplefilter("ignore", tilelang.errors.TileLangPerformanceWarning)
                k = tilelang.compile(case.func, pass_configs=case.pass_configs or None, **kw)
            outs = [o.copy() for o in case.outputs]
            k(*[i.copy() for i in case.inputs], *outs)
        except (tilelang.errors.TileLangLayoutError, tilelang.errors.TileLangResourceError) as e:
            # A clear refusal of a program this backend cannot map (a documented limit), not a bug.
            print(f"  {name} rejects it: {str(e).splitlines()[0][:200]}")
            continue
        except Exception as e:  # any other exception from an accepted program is a finding
            failures.append(f"{name}: {type(e).__name__}: {str(e)[:2000]}\n{traceback.format_exc(limit=3)}")
            continue
        for o, w in zip(outs, case.reference):
            ok, how = _close(o, w, case.tol)
            if not ok:
                failures.append(f"{name}: result differs from NumPy ({how})")
    return failures


def differential_ptx(case):
    """Runs `case` on the thread-level IR emulator and on the PTX emulator (the PTX NVRTC made of the generated
    CUDA), sm_80, and compares them: outputs (exactly where both are exact, else within the case's tolerance
    against NumPy as well) and the kinds of findings each reports. Returns failure messages (empty: agreed)."""
    results = {}
    for name in ("emulator", "ptx"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", tilelang.errors.TileLangPerformanceWarning)
                k = tilelang.compile(case.func, target="cuda -arch=sm_80", execution_backend=name,
                                     pass_configs=case.pass_configs or None)
            outs = [o.copy() for o in case.outputs]
            k(*[i.copy() for i in case.inputs], *outs)
            results[name] = ("ok", outs)
        except tilelang.errors.TileLangEmulationError as e:
            results[name] = ("reports", sorted({k for k, _ in e.reports}))
        except (tilelang.errors.TileLangLayoutError, tilelang.errors.TileLangResourceError) as e:
            results[name] = ("refused", type(e).__name__)
        except Exception as e:
            return [f"{name}: {type(e).__name__}: {str(e)[:2000]}\n{traceback.format_exc(limit=3)}"]
    ir, ptx = results["emulator"], results["ptx"]
    if ir[0] != ptx[0] or (ir[0] != "ok" and ir[1] != ptx[1]):
        return [f"the thread-level emulator gives {ir[0]} {ir[1] if ir[0] != 'ok' else ''}, the PTX emulator "
                f"{ptx[0]} {ptx[1] if ptx[0] != 'ok' else ''}"]
    failures = []
    if ir[0] == "ok":
        for a, b, w in zip(ir[1], ptx[1], case.reference):
            ok, how = _close(b, w, case.tol)
            if not ok:
                failures.append(f"ptx: result differs from NumPy ({how})")
            ok, how = _close(b, np.asarray(a).astype(np.float64), case.tol)
            if not ok:
                failures.append(f"ptx: result differs from the thread-level emulator's ({how})")
    return failures
