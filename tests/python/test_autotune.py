"""@tilelang.autotune on the CPU target: candidates compile in worker processes, failing and wrong ones
are skipped with their reason, the fastest is chosen, and the choice is cached in memory and on disk."""
import numpy as np
import pytest

import kernels as K
import tilelang
import tilelang.language as T
from tilelang.errors import TileLangArgumentError, TileLangTypeError

SIZE = 256
FACTORY_CALLS = []  # block configurations the factory was called with in this (the parent) process

DEFAULT = {}  # the factory's own defaults: block 128 x 128 x 32
CONFIGS = [DEFAULT, {"block_M": 64, "block_N": 64, "block_K": 32}, {"block_M": 32, "block_N": 32, "block_K": 32},
           {"block_M": 0}]  # the last one cannot compile: T.ceildiv(M, 0)


def matmul_f32(M, N, K_, block_M=128, block_N=128, block_K=32):
    FACTORY_CALLS.append((block_M, block_N, block_K))
    return K.matmul(M, N, K_, block_M, block_N, block_K, dtype="float32")


def _ref(A, B):
    return A.astype(np.float64) @ B.astype(np.float64)


def _tuned(**kw):
    """A fresh tuner (empty in-memory cache) over the same factory: same source, name and configs."""
    return tilelang.autotune(configs=CONFIGS, warmup=5, rep=25, ref_prog=_ref, atol=1e-3, rtol=1e-3, **kw)(
        tilelang.jit(out_idx=[2], target="cpu")(matmul_f32))


def test_autotune_gemm_blocks(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    FACTORY_CALLS.clear()
    tuned = _tuned()
    result = tuned(SIZE, SIZE, SIZE)

    # every candidate has an outcome; the bad one is skipped with the compiler's reason, printed too
    assert len(result.results) == len(CONFIGS)
    bad = result.results[3]
    assert bad.status == "compile_error" and not bad.ok
    assert "TileLangTypeError" in bad.reason and "division" in bad.reason
    assert "skipped config {'block_M': 0}" in capsys.readouterr().err
    ok = [r for r in result.results if r.ok]
    assert [r.index for r in ok] == [0, 1, 2] and all(r.latency > 0 for r in ok)
    # the parent compiled only the valid candidates (the bad one failed in a worker) and then the best again
    assert sorted(set(FACTORY_CALLS)) == sorted({(128, 128, 32), (64, 64, 32), (32, 32, 32)})

    # the chosen config is the fastest measured, so no slower than the factory's default in the same run
    assert result.config in CONFIGS and result.latency == min(r.latency for r in ok)
    assert result.latency <= result.results[0].latency
    assert result.ref_latency is not None and result.ref_latency > 0

    # the chosen kernel computes the product and calls like a kernel
    rng = np.random.default_rng(0)
    A = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    B = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    np.testing.assert_allclose(result(A, B), _ref(A, B), rtol=1e-4, atol=1e-3)
    assert result.get_kernel_source() == result.kernel.get_kernel_source()

    # a second call with the same arguments is answered from memory
    n_calls = len(FACTORY_CALLS)
    assert tuned(SIZE, SIZE, SIZE) is result
    assert len(FACTORY_CALLS) == n_calls

    # a new process (here: a fresh tuner) reads the disk cache: only the best config is built, no tuning
    again = _tuned()(SIZE, SIZE, SIZE)
    assert again.from_cache and again.config == result.config and again.latency == result.latency
    assert len(FACTORY_CALLS) == n_calls + 1
    assert again.results[3].status == "compile_error" and "division" in again.results[3].reason
    assert again.cache_path == result.cache_path and again.cache_path.startswith(str(tmp_path))
    # other arguments are another tuning problem
    assert tuned.tuner._cache_path((SIZE, SIZE, 128), {}, CONFIGS) != result.cache_path


def _add_plus(block, tweak=0.0):
    n = T.dynamic("n")

    @T.prim_func
    def add_plus(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                idx = bx * block + i
                if idx < n:
                    C[idx] = A[idx] + B[idx] + tweak

    return add_plus


def test_autotune_skips_wrong_results(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    configs = [{"block": 64, "tweak": 0.5}, {"block": 128}, {"block": 64}]
    tuned = tilelang.autotune(configs=configs, warmup=1, rep=5, ref_prog=lambda a, b: a.astype(np.float64) + b,
                              dynamic_values={"n": 1000}, verbose=False)(
        tilelang.jit(out_idx=[2], target="cpu")(_add_plus))
    result = tuned()
    wrong = result.results[0]
    assert wrong.status == "wrong" and "differs from ref_prog" in wrong.reason and "'C'" in wrong.reason
    assert result.config in configs[1:] and result.results[1].ok and result.results[2].ok
    # nothing valid at all: a clear error listing every reason
    none_ok = tilelang.autotune(configs=[{"block": 64, "tweak": 1.0}], ref_prog=lambda a, b: a + b,
                                dynamic_values={"n": 100}, verbose=False, use_cache=False)(
        tilelang.jit(out_idx=[2], target="cpu")(_add_plus))
    with pytest.raises(TileLangArgumentError, match="no configuration compiled and passed"):
        none_ok()


def test_autotune_usage_errors():
    with pytest.raises(TileLangTypeError, match="above @tilelang.jit"):
        tilelang.autotune(configs=[{}])(_add_plus)
    tuned = tilelang.autotune(configs=lambda: [{"block": 64}], verbose=False, use_cache=False)(
        tilelang.jit(out_idx=[2], target="cpu")(_add_plus))
    with pytest.raises(TileLangArgumentError, match="block"):
        # `block` is both passed and tuned while `tweak` is tuned too: neither a tuning run nor one config
        tilelang.autotune(configs=[{"block": 64, "tweak": 0.0}], verbose=False, use_cache=False)(
            tilelang.jit(out_idx=[2], target="cpu")(_add_plus))(64)
    with pytest.raises(TileLangTypeError, match="dict"):
        tilelang.autotune(configs=[64], use_cache=False)(tilelang.jit(target="cpu")(_add_plus))()


def _slow_or_crashing(i):
    import os
    import time

    if i == 1:
        time.sleep(60)
    if i == 2:
        os._exit(3)  # a worker dying as a crashing compiler would
    if i == 3:
        raise TileLangTypeError("bad tile")


def test_compile_pool_timeouts_crashes_and_errors():
    from tilelang.autotuner import compile_pool

    if not compile_pool.fork_available():
        pytest.skip("needs fork")
    seen = []
    out = compile_pool.compile_all(_slow_or_crashing, [0, 1, 2, 3, 4], workers=2, timeout=5.0,
                                   on_done=lambda i, r: seen.append(i))
    assert sorted(out) == [0, 1, 2, 3, 4] and sorted(seen) == [0, 1, 2, 3, 4]
    assert out[0][0] is None and out[4][0] is None
    assert "timed out" in out[1][0]
    assert "crashed" in out[2][0]
    assert out[3][0] == "TileLangTypeError: bad tile"


def test_set_autotune_inputs(tmp_path, monkeypatch):
    """The candidates are checked and timed on the tensors set_autotune_inputs gives (the reference sees
    them), and a wrong number of tensors is each candidate's reported error."""
    from tilelang.autotuner import set_autotune_inputs

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    seen = []

    def ref(a, b):
        seen.append(np.array(a))
        return a.astype(np.float64) + b

    n = 777
    rng = np.random.default_rng(5)
    print("seed 5")
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    tuned = tilelang.autotune(configs=[{"block": 64}, {"block": 128}], warmup=1, rep=3, ref_prog=ref, verbose=False,
                              use_cache=False)(tilelang.jit(out_idx=[2], target="cpu")(_add_plus))
    with set_autotune_inputs(a, b):
        result = tuned()
    assert all(r.ok for r in result.results) and seen
    assert all(s.shape == (n,) and np.array_equal(s, a) for s in seen)
    tuned2 = tilelang.autotune(configs=[{"block": 64}], warmup=1, rep=3, ref_prog=ref, verbose=False,
                               use_cache=False)(tilelang.jit(out_idx=[2], target="cpu")(_add_plus))
    with set_autotune_inputs([a]), pytest.raises(TileLangArgumentError, match="set_autotune_inputs gave 1 tensor"):
        tuned2()


def test_the_result_is_the_best_kernel(tmp_path, monkeypatch):
    """An autotuned function returns the best kernel, as TileLang's does (its AutoTuneImpl returns the JITKernel):
    isinstance JITKernel, and JITKernel's methods run on it; the tuning's config / latency / results stay on it.
    Before: an AutotuneResult that only forwarded attributes (isinstance JITKernel was False)."""
    from tilelang.jit.kernel import JITKernel

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    given = _tuned()(SIZE, SIZE, SIZE, block_M=64, block_N=64, block_K=32)  # every tuned parameter given
    tuned = _tuned()(SIZE, SIZE, SIZE)
    for k in (given, tuned):
        assert isinstance(k, JITKernel)
        assert "tl_entry" in k.get_kernel_source() and k.out_idx == [2] and k.kind == "cpu"
        a = np.random.default_rng(3).standard_normal((SIZE, SIZE)).astype(np.float32)
        np.testing.assert_allclose(k(a, a), _ref(a, a), rtol=1e-4, atol=1e-3)
    assert given.config == {"block_M": 64, "block_N": 64, "block_K": 32} and given.latency is None
    assert tuned.latency > 0 and tuned.config in CONFIGS[:3] and len(tuned.results) == len(CONFIGS)
    assert tuned.from_cache is False  # the tuning's cache, not the kernel build's
