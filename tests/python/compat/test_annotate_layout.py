"""T.annotate_layout honoured (issue 12, item 3): a T.Layout on a shared tile and a T.Fragment on a fragment are
IR layouts the GPU lowerings use (src/layout/user_layout.h), written in TileLang's style (lambdas inline in the
kernel). Numerics run in the emulator (CUDA and HIP lowerings) and on the CPU target against NumPy in float64 at
ragged sizes; the layouts' effect is checked in the generated code and the emulator's bank-conflict counts."""
import re
import warnings

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangLayoutError, TileLangPerformanceWarning, TileLangTypeError

SEED = 20261201


def _rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)


def _compile(func, target, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TileLangPerformanceWarning)
        return tilelang.compile(func, target=target, **kw)


# ---- shared tiles ------------------------------------------------------------------------------------------
def gemm_with_a_layout(kind, M, N, K):
    """The reference GEMM with 64x64x32 tiles whose A tile has the layout `kind`, written inline as TileLang
    programs do."""

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            if kind == "row-major":
                T.annotate_layout({A_s: T.Layout((64, 32), lambda i, j: (i, j))})
            elif kind == "padded":  # one flat index, rows 40 elements apart
                T.annotate_layout({A_s: T.Layout((64, 32), lambda i, j: i * 40 + j)})
            elif kind == "xor":  # 16-byte chunks permuted by row, in a 3-d physical index
                T.annotate_layout({A_s: T.Layout((64, 32), lambda i, j: (i // 2, i % 2, ((j // 8) ^ (i % 4)) * 8 + j % 8))})
            elif kind == "pairs":  # column pairs: 4 bytes of a row together
                T.annotate_layout({A_s: T.Layout((64, 32), lambda i, j: (j // 2, i * 2 + j % 2))})
            else:
                T.annotate_layout({A_s: tilelang.layout.make_swizzled_layout(A_s)})
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * 64, k * 32], A_s)
                T.copy(B[k * 32, bx * 64], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 64, bx * 64])

    return gemm


# kind -> (physical extents, elements kept contiguous)
SHARED_KINDS = {"row-major": ("64x32", 32), "padded": ("2552", 8), "xor": ("32x2x32", 8), "pairs": ("16x128", 2)}


def _gemm_inputs(M, N, K):
    rng = _rng()
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    return A, B, A.astype(np.float64) @ B.astype(np.float64)


@pytest.mark.parametrize("kind", sorted(SHARED_KINDS))
def test_shared_layout_is_used_by_copies_and_gemm(kind):
    M, N, K = 100, 72, 96  # ragged: neither M nor N a multiple of the 64-wide tile
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        k = tilelang.compile(gemm_with_a_layout(kind, M, N, K), target="cuda -arch=sm_80",
                             execution_backend="emulator")
    msgs = [str(w.message) for w in rec]
    phys, contiguous = SHARED_KINDS[kind]
    note = [c for c in k.choices if "'A_s' has the user layout" in c]
    assert len(note) == 1 and f"-> {phys})" in note[0] and f"({contiguous} contiguous" in note[0], k.choices
    A, B, ref = _gemm_inputs(M, N, K)
    C = np.zeros((M, N), np.float32)
    k(A, B, C)
    np.testing.assert_allclose(C, ref, rtol=1e-3, atol=1e-3)
    src = k.get_kernel_source()
    if contiguous * 2 >= 16:  # 16 bytes of a row together: cp.async and ldmatrix read the tile in place
        assert any("A -> A_s: 16-byte cp.async into a shared tile with its T.annotate_layout layout" in c
                   for c in k.choices), k.choices
        assert not any("relaid" in m for m in msgs) and "A_relaid" not in src
    else:  # the pairs layout: synchronous loads, and the gemm reads a copy in the compiler's layout
        assert any("A_s' keeps 2 element(s) (4 bytes) of a row together" in m for m in msgs), msgs
        assert any("T.gemm operand A ('A_s') is copied into a tile of the compiler's layout" in m for m in msgs), msgs
        assert "A_relaid" in src
    if kind == "padded":  # rows 40 halves apart in the generated addresses; the tile holds 2552 halves
        assert "* 40)" in src or "*40" in src.replace(" ", ""), src


def test_a_padded_tile_occupies_its_physical_size_and_keeps_cp_async():
    k = _compile(gemm_with_a_layout("padded", 256, 256, 128), "cuda -arch=sm_80")  # through NVRTC
    rows = {line.split()[0]: line.split() for line in k.get_shared_memory_report().splitlines()[1:] if line}
    assert rows["A_s"][4] == str(2552 * 2 * 2), k.get_shared_memory_report()  # 2552 halves, 2 stages
    assert rows["B_s"][4] == str(32 * 64 * 2 * 2)
    ptx = k.get_ptx()
    assert "cp.async.cg.shared.global" in ptx and "ldmatrix.sync.aligned" in ptx and "mma.sync.aligned" in ptx


def test_make_swizzled_layout_means_the_compilers_swizzle():
    k = _compile(gemm_with_a_layout("swizzled", 128, 128, 64), "cuda -arch=sm_80")
    assert not any("user layout" in c for c in k.choices)
    assert any("16-byte cp.async into a swizzled shared tile" in c for c in k.choices)


def transpose_through_shared(layout_fn):
    """B = A.T through a shared tile read down its columns by 32 threads: the bank pattern of those reads is
    the layout's."""

    @T.prim_func
    def tr(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((32, 32), "float32")
            T.annotate_layout({S: T.Layout((32, 32), layout_fn)})
            T.copy(A, S)
            tx = T.get_thread_binding()
            for j in T.serial(32):
                B[j, tx] = S[tx, j]

    return tr


def test_a_padded_layout_removes_the_bank_conflicts_of_column_reads():
    A = _rng().standard_normal((32, 32)).astype(np.float32)
    counts = {}
    for name, fn in (("row-major", lambda i, j: (i, j)), ("padded", lambda i, j: i * 33 + j)):
        k = _compile(transpose_through_shared(fn), "cuda -arch=sm_80", execution_backend="emulator")
        B = np.zeros_like(A)
        k(A, B)
        np.testing.assert_array_equal(B, A.T)
        counts[name] = k.last_bank_conflicts[("S", "read")]
    # row-major: the 32 lanes of a column read hit one bank (32-way); padded by one word: 32 banks
    assert counts["row-major"]["max_ways"] == 32 and counts["row-major"]["extra_cycles"] == 32 * 31, counts
    assert counts["padded"]["max_ways"] == 1 and counts["padded"]["extra_cycles"] == 0, counts


def test_shared_layout_on_hip_and_cpu():
    M, N, K = 100, 72, 96
    A, B, ref = _gemm_inputs(M, N, K)
    for target, kw in (("hip", {"execution_backend": "emulator"}), ("cpu", {})):
        k = _compile(gemm_with_a_layout("padded", M, N, K), target, **kw)
        C = np.zeros((M, N), np.float32)
        k(A, B, C)
        np.testing.assert_allclose(C, ref, rtol=1e-3, atol=1e-3, err_msg=target)
    src = _compile(gemm_with_a_layout("padded", M, N, K), "hip").get_kernel_source()
    assert "* 40)" in src or "*40" in src.replace(" ", "")


def test_sm90a_keeps_tma_and_wgmma_off_a_user_layout_and_says_so():
    with pytest.warns(TileLangPerformanceWarning) as rec:
        k = tilelang.compile(gemm_with_a_layout("xor", 256, 256, 128), target="cuda -arch=sm_90a")
    msgs = [str(w.message) for w in rec]
    assert any("T.copy A -> A_s does not use TMA: 'A_s' has a layout from T.annotate_layout" in m for m in msgs), msgs
    assert any("T.gemm uses mma.sync, not wgmma: operand 'A_s' has a layout from T.annotate_layout" in m
               for m in msgs), msgs
    ptx = k.get_ptx()
    assert "wgmma" not in ptx and "mma.sync.aligned" in ptx and "cp.async.bulk.tensor" not in ptx


# ---- fragments ---------------------------------------------------------------------------------------------
def column_sums(frag_kind, R=8, W=128):
    """Y = column sums of 2 * X, Z = 2 * X, through a fragment with the layout `frag_kind`."""

    @T.prim_func
    def sums(X: T.Tensor((R, W), "float32"), Y: T.Tensor((W,), "float32"), Z: T.Tensor((R, W), "float32")):
        with T.Kernel(1, threads=128) as bx:
            v = T.alloc_fragment((R, W), "float32")
            s = T.alloc_fragment((W,), "float32")
            if frag_kind == "warp-columns":  # TileLang's reducer test layout: a column's 4-row groups in one warp
                T.annotate_layout({v: T.Fragment((R, W), forward_thread_fn=lambda r, c: c // 4 * 4 + r % 4,
                                                 forward_index_fn=lambda r, c: r // 4 * 4 + c % 4)})
            elif frag_kind == "rows":  # a row per thread, registers numbered by the compiler (8 threads, x16)
                T.annotate_layout({v: T.Fragment((R, W), forward_thread_fn=lambda r, c: r)})
            else:  # replicated twice over 64 threads
                T.annotate_layout({v: T.Fragment((R, W), forward_thread_fn=lambda r, c, rep: c % 32 + 32 * rep,
                                                 replicate=2)})
            T.copy(X, v)
            for i, j in T.Parallel(R, W):
                v[i, j] = v[i, j] * 2.0
            T.reduce_sum(v, s, dim=0)
            T.copy(s, Y)
            T.copy(v, Z)

    return sums


FRAGMENT_KINDS = {
    "warp-columns": "user fragment(8x128, 128 threads, 8 per thread)",
    "rows": "user fragment(8x128, 8 threads, 128 per thread) x16 thread groups",
    "replicated": "user fragment(8x128, 64 threads, 32 per thread, 2 replicas) x2 thread groups",
}


@pytest.mark.parametrize("kind", sorted(FRAGMENT_KINDS))
@pytest.mark.parametrize("target", ["cuda -arch=sm_80", "hip", "cpu"])
def test_fragment_layout_drives_the_loops_over_it(kind, target):
    X = _rng().standard_normal((8, 128)).astype(np.float32)
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    k = _compile(column_sums(kind), target, **kw)
    Y = np.zeros(128, np.float32)
    Z = np.zeros((8, 128), np.float32)
    k(X, Y, Z)
    np.testing.assert_allclose(Y, 2 * X.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(Z, 2 * X)
    if target != "cpu":
        want = FRAGMENT_KINDS[kind]
        assert any(f"parallel loop nest partitioned by {want}, " in c for c in k.choices), k.choices
        assert any(f"T.reduce of {want}:" in c for c in k.choices), k.choices


def test_a_fragment_layout_an_op_cannot_use_is_a_conflict_at_the_annotation():
    @T.prim_func
    def bad(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.annotate_layout({C_l: T.Fragment((64, 64), forward_thread_fn=lambda i, j: i * 2 + j // 32)})
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C)

    with pytest.raises(TileLangLayoutError, match=r"layout conflict for fragment 'C_l': T.annotate_layout at "
                       r".*test_annotate_layout.py:\d+ gives it user fragment.* but T.gemm accumulator"):
        tilelang.compile(bad, target="cuda -arch=sm_80")
    # the compiler's own accumulator layout, given explicitly, is no conflict
    assert tilelang.layout.mma_accumulator(64, 64, 2, 2).desc.startswith("mma_C(64x64")


def _sums_with(layout):
    @T.prim_func
    def k(X: T.Tensor((8, 128), "float32"), Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            v = T.alloc_fragment((8, 128), "float32")
            s = T.alloc_fragment((128,), "float32")
            T.annotate_layout({v: layout})
            T.copy(X, v)
            T.reduce_sum(v, s, dim=0)
            T.copy(s, Y)

    return k


@pytest.mark.parametrize("layout,cls,message", [
    (T.Fragment((8, 128), forward_thread_fn=lambda r, c: c % 64, forward_index_fn=lambda r, c: r),
     TileLangLayoutError, r"puts elements \[0, 0\] and \[0, 64\] in thread 0's register 0"),
    (T.Fragment((8, 128), forward_thread_fn=lambda r, c: c ^ r, forward_index_fn=lambda r, c: r),
     TileLangLayoutError, r"has no closed-form inverse"),
    (T.Fragment((8, 128), forward_thread_fn=lambda r, c: c + 128 * (r % 2)),
     TileLangLayoutError, r"uses 256 threads, but the kernel has 128"),
    (T.Fragment((8, 128), forward_thread_fn=lambda r, c: c if r < 4 else c),
     TileLangTypeError, r"cannot be compiled: a layout function branches on the index"),
    (T.Fragment((8, 64), forward_thread_fn=lambda r, c: c),
     TileLangTypeError, r"is over shape \(8, 64\), but the buffer's shape is \(8, 128\)"),
    (T.Layout((8, 128), lambda r, c: (r, c)),
     TileLangTypeError, r"'v' is a fragment; it takes a T.Fragment"),
])
def test_bad_fragment_layouts_are_errors_at_the_annotation(layout, cls, message):
    with pytest.raises(cls, match=message) as e:
        tilelang.compile(_sums_with(layout), target="cuda -arch=sm_80")
    assert "test_annotate_layout.py:" in str(e.value)


def _tile_with(layout_fn, shape=(16, 16)):
    @T.prim_func
    def k(A: T.Tensor(shape, "float32"), B: T.Tensor(shape, "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared(shape, "float32")
            T.annotate_layout({S: T.Layout(shape, layout_fn)})
            T.copy(A, S)
            T.copy(S, B)

    return k


@pytest.mark.parametrize("fn,cls,message", [
    (lambda i, j: (i // 2, j), TileLangLayoutError, r"puts elements \[0, 0\] and \[1, 0\] at the same physical index"),
    (lambda i, j: (i - 1, j), TileLangLayoutError, r"maps element \[0, 0\] to a negative physical index -1"),
    (lambda i, j: i * 100 + j, TileLangLayoutError, r"spreads its 256 elements over 1516 physical slots"),
    (lambda i, j: (i, j & 5), TileLangTypeError, r"only masks of the form 2\^k - 1"),
    (lambda i, j: (i, j) if i < 8 else (j, i), TileLangTypeError, r"branches on the index"),
])
def test_bad_shared_layouts_are_errors_at_the_annotation(fn, cls, message):
    with pytest.raises(cls, match=message) as e:
        _compile(_tile_with(fn), "cuda -arch=sm_80")
    assert "test_annotate_layout.py:" in str(e.value)


def test_bit_operators_in_a_layout_function():
    """`&` with a mask, `>>` and `<<` trace to modulo, division and multiplication; the copy round-trips."""
    A = _rng().standard_normal((16, 16)).astype(np.float32)
    k = _compile(_tile_with(lambda i, j: ((i >> 1) << 5) + (i & 1) * 16 + (j ^ (i & 3))), "cuda -arch=sm_80",
                 execution_backend="emulator")
    B = np.zeros_like(A)
    k(A, B)
    np.testing.assert_array_equal(B, A)


def test_a_lambda_in_a_kernel_body_is_a_parse_time_function():
    """Layout lambdas are evaluated by the parser; any other lambda in a body is too (inlined where called)."""

    @T.prim_func
    def scaled(A: T.Tensor((37,), "float32"), B: T.Tensor((37,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            twice_plus = lambda x, y: x * 2.0 + y  # noqa: E731
            for i in T.Parallel(37):
                B[i] = twice_plus(A[i], 1.0)

    a = _rng().standard_normal(37).astype(np.float32)
    b = np.zeros_like(a)
    tilelang.compile(scaled, target="cpu")(a, b)
    np.testing.assert_allclose(b, a.astype(np.float64) * 2 + 1, rtol=1e-6)


def _dq_kernels(B, L, D, blk):
    """TileLang's FlashAttention-backward pattern: one kernel accumulates a float32 dQ with atomic adds, a second
    reads it back; both annotate dQ with a permuting T.Layout (TileLang stores dQ that way)."""
    def dq_layout(dQ):
        return T.Layout(dQ.shape, lambda b, l, d: [b, l // 8, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2])

    @T.prim_func
    def accumulate(X: T.Tensor((B, L, D), "float32"), dQ: T.Tensor((B, L, D), "float32")):
        with T.Kernel(L // blk, B, 2, threads=128) as (bx, by, half):
            T.annotate_layout({dQ: dq_layout(dQ)})
            acc = T.alloc_fragment((blk, D), "float32")
            for i, j in T.Parallel(blk, D):
                acc[i, j] = X[by, bx * blk + i, j] * (half + 1)
            T.atomic_add(dQ[by, bx * blk:(bx + 1) * blk, :], acc)

    @T.prim_func
    def postprocess(dQ: T.Tensor((B, L, D), "float32"), out: T.Tensor((B, L, D), "float16")):
        with T.Kernel(L // blk, B, threads=128) as (bx, by):
            T.annotate_layout({dQ: dq_layout(dQ)})
            T.copy(dQ[by, bx * blk:(bx + 1) * blk, :], out[by, bx * blk:(bx + 1) * blk, :])

    return accumulate, postprocess


@pytest.mark.parametrize("target", ["cpu", "cuda -arch=sm_80"])
def test_global_layout_is_accepted_with_a_warning_and_results_match(target):
    """Before: "T.annotate_layout: 'dQ' is a global buffer" (a TileLangTypeError). Now a warning at the line
    says the layout is not applied (the tensor stays row-major), and the two kernels give TileLang's result."""
    B, L, D, blk = 2, 64, 32, 32
    with pytest.warns(TileLangPerformanceWarning) as rec:
        acc_f, post_f = _dq_kernels(B, L, D, blk)
    msgs = [str(w.message) for w in rec if issubclass(w.category, TileLangPerformanceWarning)]
    pattern = (r"test_annotate_layout.py:\d+:\d+: T.annotate_layout on the global tensor 'dQ' is not applied: it "
               r"keeps its row-major storage")
    assert len([m for m in msgs if re.search(pattern, m)]) == 2, msgs  # one per kernel
    kw = {} if target == "cpu" else {"execution_backend": "emulator"}
    acc_k = tilelang.compile(acc_f, target=target, **kw)
    post_k = tilelang.compile(post_f, target=target, **kw)
    seed = 5
    print(f"seed {seed}")
    x = np.random.default_rng(seed).standard_normal((B, L, D)).astype(np.float32)
    dq = np.zeros((B, L, D), np.float32)
    out = np.zeros((B, L, D), np.float16)
    acc_k(x, dq)
    post_k(dq, out)
    np.testing.assert_allclose(dq, 3 * x.astype(np.float64), rtol=1e-6)  # row-major storage, as the warning says
    np.testing.assert_allclose(out.astype(np.float64), 3 * x.astype(np.float64), rtol=1e-3, atol=1e-3)


def test_global_layout_of_the_wrong_shape_is_an_error():
    with pytest.raises(TileLangTypeError, match="over shape .* but the tensor's shape is"):
        @T.prim_func
        def bad(dQ: T.Tensor((4, 8), "float32")):
            with T.Kernel(1, threads=32):
                T.annotate_layout({dQ: T.Layout((8, 4), lambda i, j: (j, i))})
        tilelang.compile(bad, target="cpu")
