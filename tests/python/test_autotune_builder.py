"""TileLang's explicit tuner and its autotune options, on the CPU target: AutoTuner.from_kernel(kernel=f,
configs=...).set_compile_args(...).set_profile_args(...).run(...); supply_prog (the inputs) and
manual_check_prog (the judge) in place of the profiler's; early_stop (a candidate whose quick estimate is
over factor x the best so far is not timed in full); do_not_specialize (parameters left out of the tuning
key: tuned once, built per value)."""
import numpy as np
import pytest

import kernels as K
import tilelang
from tilelang.autotuner import AutoTuner
from tilelang.errors import TileLangArgumentError, TileLangUnsupportedError

SEED = 20261204
SIZE = 128


def _ref(A, B):
    return A.astype(np.float64) @ B.astype(np.float64)


def _gemm(block_M=None, block_N=None):
    return K.matmul(SIZE, SIZE, SIZE, block_M, block_N, 32, dtype="float32")


def test_from_kernel_builder(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    configs = [{"block_M": 64, "block_N": 64}, {"block_M": 32, "block_N": 32}]
    result = (AutoTuner.from_kernel(kernel=_gemm, configs=configs)
              .set_compile_args(out_idx=[-1], target="cpu")
              .set_profile_args(ref_prog=_ref, atol=1e-3, rtol=1e-3, skip_check=False, backend="wall")
              .run(warmup=2, rep=10))
    assert result.config in configs and result.latency > 0
    assert [r.status for r in result.results] == ["ok", "ok"]
    assert result.latency == min(r.latency for r in result.results)
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    b = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    np.testing.assert_allclose(result.kernel(a, b), _ref(a, b), rtol=1e-4, atol=1e-3)


def test_supply_prog_and_manual_check_prog(tmp_path, monkeypatch):
    """The supplied inputs reach the kernel and the reference; the manual check sees both outputs and its
    verdict decides: a check that raises rejects every candidate (an error listing them)."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    seen_specs, seen_outputs = [], []

    def supply(specs):
        seen_specs.append([tuple(s.shape) for s in specs])
        return [np.full(s.shape, 2.0, np.float32) for s in specs]

    def check(outs, refs):
        seen_outputs.append((outs[0].copy(), refs[0].copy()))
        np.testing.assert_allclose(outs[0], refs[0], rtol=1e-5)

    tuned = tilelang.autotune(configs=[{"block_M": 32, "block_N": 32}], warmup=1, rep=3, ref_prog=_ref,
                              supply_prog=supply, manual_check_prog=check)(
        tilelang.jit(out_idx=[-1], target="cpu")(lambda block_M=None, block_N=None: _gemm(block_M, block_N)))
    result = tuned()
    assert result.results[0].ok
    assert seen_specs == [[(SIZE, SIZE), (SIZE, SIZE)]]
    out, ref = seen_outputs[0]
    assert np.all(out == 4.0 * SIZE) and np.all(ref == 4.0 * SIZE)  # 2 x 2 summed over K: the supplied inputs

    def reject(outs, refs):
        raise AssertionError("not good enough")

    tuned = tilelang.autotune(configs=[{"block_M": 32, "block_N": 32}], warmup=1, rep=3, ref_prog=_ref,
                              manual_check_prog=reject, use_cache=False)(
        tilelang.jit(out_idx=[-1], target="cpu")(lambda block_M=None, block_N=None: _gemm(block_M, block_N)))
    with pytest.raises(TileLangArgumentError, match="not good enough"):
        tuned()


def _slow_or_fast(repeat=1, block_M=None, block_N=None):
    """A GEMM whose K loop runs `repeat` times over the same tiles: repeat=3000 is about 3000x the work (far beyond timer noise on a loaded machine)."""
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((SIZE, SIZE), "float32"), B: T.Tensor((SIZE, SIZE), "float32"),
             C: T.Tensor((SIZE, SIZE), "float32")):
        with T.Kernel(T.ceildiv(SIZE, block_N), T.ceildiv(SIZE, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, 32), "float32")
            B_s = T.alloc_shared((32, block_N), "float32")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for r in T.serial(repeat):
                for k in T.Pipelined(SIZE // 32, num_stages=2):
                    T.copy(A[by * block_M, k * 32], A_s)
                    T.copy(B[k * 32, bx * block_N], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


def test_early_stop(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    configs = [{"repeat": 1, "block_M": 64, "block_N": 64}, {"repeat": 3000, "block_M": 64, "block_N": 64}]
    result = (AutoTuner.from_kernel(kernel=_slow_or_fast, configs=configs)
              .set_compile_args(out_idx=[-1], target="cpu")
              .set_profile_args(backend="wall")
              .run(warmup=2, rep=10, early_stop=True, early_stop_factor=2.0))
    fast, slow = result.results
    assert fast.status == "ok" and result.config == configs[0]
    assert slow.status == "early_stopped" and "not timed in full" in slow.reason
    assert slow.latency > 2.0 * fast.latency  # the estimate it was stopped on
    with pytest.raises(TileLangArgumentError, match="early_stop_factor must be >= 1.0"):
        AutoTuner.from_kernel(kernel=_slow_or_fast, configs=configs).set_compile_args(target="cpu").run(
            early_stop=True, early_stop_factor=0.5)


def test_do_not_specialize(tmp_path, monkeypatch):
    """Tuned once for the first M; a call with another M reuses the configuration without tuning, and its
    kernel is built for that M."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    built = []

    def gemm(M, block_M=32, block_N=32):
        built.append((M, block_M, block_N))
        return K.matmul(M, SIZE, SIZE, block_M, block_N, 32, dtype="float32")

    tuned = tilelang.autotune(configs=[{"block_M": 32, "block_N": 32}, {"block_M": 64, "block_N": 64}], warmup=1,
                              rep=3, ref_prog=_ref, do_not_specialize=["M"])(
        tilelang.jit(out_idx=[-1], target="cpu")(gemm))
    first = tuned(64)
    tuned_builds = len(built)
    second = tuned(96)
    assert second.config == first.config and second.results is first.results
    assert built[tuned_builds:] == [(96, first.config["block_M"], first.config["block_N"])]
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((96, SIZE)).astype(np.float32)
    b = rng.standard_normal((SIZE, SIZE)).astype(np.float32)
    np.testing.assert_allclose(second(a, b), _ref(a, b), rtol=1e-4, atol=1e-3)
    with pytest.raises(TileLangArgumentError, match="no parameter of"):
        tilelang.autotune(configs=[{}], do_not_specialize=["Q"])(tilelang.jit(target="cpu")(gemm))


def test_builder_refuses_what_it_cannot_do():
    b = AutoTuner.from_kernel(kernel=_gemm, configs=[{"block_M": 32, "block_N": 32}]).set_compile_args(target="cpu")
    with pytest.raises(TileLangUnsupportedError, match="benchmark_multi_gpu"):
        b.run(benchmark_multi_gpu=True)
    with pytest.raises(Exception, match="takes a function"):
        AutoTuner.from_kernel(kernel=42, configs=[{}])


def test_compile_on_tuned_and_jit_factories(tmp_path, monkeypatch):
    """`f.compile(...)` as TileLang's examples call it: on an @autotune'd factory with every tuned parameter
    given it builds that configuration without tuning; otherwise it tunes first. On a plain @tilelang.jit
    factory it is the call."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    built = []

    def gemm(M, block_M=32, block_N=32):
        built.append((block_M, block_N))
        return K.matmul(M, SIZE, SIZE, block_M, block_N, 32, dtype="float32")

    jitted = tilelang.jit(out_idx=[-1], target="cpu")(gemm)
    assert jitted.compile(64) is jitted(64)
    tuned = tilelang.autotune(configs=[{"block_M": 32, "block_N": 32}, {"block_M": 64, "block_N": 64}], warmup=1,
                              rep=3)(tilelang.jit(out_idx=[-1], target="cpu")(gemm))
    built.clear()
    kernel = tuned.compile(64, block_M=64, block_N=32)
    assert built == [(64, 32)]
    a = np.ones((64, SIZE), np.float32)
    b = np.ones((SIZE, SIZE), np.float32)
    np.testing.assert_array_equal(kernel(a, b), np.full((64, SIZE), SIZE, np.float32))
    best = tuned.compile(64)
    assert (best.func is not None) and len(set(built)) >= 2  # both candidates were built to tune


def test_pass_configs_in_a_configuration(tmp_path, monkeypatch):
    """TileLang's configurations may carry "pass_configs" (the candidate's compile options), not a factory
    argument. Before: every candidate failed with "unexpected keyword argument 'pass_configs'"."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    configs = [{"block_M": 32, "block_N": 32, "pass_configs": {"tl.disable_async_copy": True}},
               {"block_M": 64, "block_N": 64, "pass_configs": {"tl.disable_async_copy": False}}]
    result = (AutoTuner.from_kernel(kernel=_gemm, configs=configs)
              .set_compile_args(out_idx=[-1], target="cpu")
              .set_profile_args(ref_prog=_ref, atol=1e-3, rtol=1e-3, backend="wall")
              .run(warmup=1, rep=3))
    assert [r.status for r in result.results] == ["ok", "ok"]
    best = next(c for c in configs if c["block_M"] == result.config["block_M"])
    assert result.kernel.pass_configs["tl.disable_async_copy"] is best["pass_configs"]["tl.disable_async_copy"]


def test_compile_scheduling_options_warn(tmp_path, monkeypatch):
    """TileLang's compile-scheduling options change nothing here: said with a warning, never silently."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    b = AutoTuner.from_kernel(kernel=_gemm, configs=[{"block_M": 32, "block_N": 32}]).set_compile_args(
        out_idx=[-1], target="cpu").set_profile_args(backend="wall")
    with pytest.warns(UserWarning, match="no effect in TileLang-C\\+\\+"):
        b.run(warmup=1, rep=2, enable_grouped_compile=True)
