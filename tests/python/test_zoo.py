"""The kernel zoo (examples/zoo): each kernel at small, partly ragged sizes on the CPU target and in the
emulator (sm_80 and sm_90a, race and bounds checks on), against its NumPy float64 reference on seeded
inputs. benchmarks/bench_zoo.py prints their static figures at DeepSeek's sizes."""
import os
import sys
import zlib

import numpy as np
import pytest

import tilelang

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from examples.zoo import attention, dequant, flash_attention, gemm, mla  # noqa: E402

TARGETS = ["cpu", "cuda -arch=sm_80", "cuda -arch=sm_90a"]


def _rng(*key):
    seed = zlib.crc32(repr(key).encode())
    print(f"seed {seed} for {key}")
    return np.random.default_rng(seed)


def _compile(f, target):
    return tilelang.compile(f, target=target, **({} if target == "cpu" else {"execution_backend": "emulator"}))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", ["persistent", "stream_k"])
def test_gemms(target, kind):
    M, N, K = 200, 136, 160  # ragged against the 64 x 64 x 32 tiles
    a, b, c = gemm.inputs(_rng(kind, target), M, N, K)
    f = gemm.persistent_gemm(M, N, K, 3, 64, 64, 32) if kind == "persistent" else \
        gemm.stream_k_gemm(M, N, K, 5, 64, 64, 32)
    _compile(f, target)(a, b, c)
    np.testing.assert_allclose(c, gemm.reference(a, b), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fmt", ["int4", "fp4"])
def test_w4a16(target, fmt):
    M, N, K, G = 72, 80, 128, 32
    a, w, s, c = dequant.w4a16_inputs(_rng(fmt, target), M, N, K, G)
    _compile(dequant.w4a16_gemm(M, N, K, G, fmt), target)(a, w, s, c)
    ref = dequant.w4a16_reference(a, w, s, G, fmt)
    # float16 weights (the scaled value rounded once) and a float16 result; float32 accumulation
    deq = dequant.w4a16_weights(w, s, G, fmt)
    bound = 2.0**-10 * (np.abs(a.astype(np.float64)) @ np.abs(deq).T) + 2.0**-10 * np.abs(ref)
    assert np.all(np.abs(c - ref) <= bound + 1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_int8(target):
    M, N, K = 72, 80, 192
    a, b, c = dequant.int8_inputs(_rng("int8", target), M, N, K)
    _compile(dequant.int8_gemm(M, N, K), target)(a, b, c)
    np.testing.assert_array_equal(c.astype(np.int64), dequant.int8_reference(a, b))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pattern", ["block_causal", "random"])
@pytest.mark.parametrize("sparsity", ["mask", "index"])
def test_block_sparse_attention(target, pattern, sparsity):
    B, H, S, D, bm, bn = 1, 2, 128, 64, 64, 32
    rng = _rng(pattern, sparsity, target)
    q, k, v, o = attention.inputs(rng, B, H, S, D)
    mask = attention.block_causal_mask(B, H, S // bm, S // bn) if pattern == "block_causal" else \
        attention.random_mask(rng, B, H, S // bm, S // bn)
    extra = (mask, mask.sum(-1).astype(np.int32)) if sparsity == "mask" else attention.mask_to_index(mask)
    _compile(attention.block_sparse_attention(B, H, S, D, bm, bn, sparsity=sparsity), target)(q, k, v, *extra, o)
    np.testing.assert_allclose(o, attention.reference(q, k, v, mask, bm, bn), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_mla_decode_paged(target):
    args = mla.decode_inputs(_rng("mla", target), 2, 16, 4, 32, 64, 32, [70, 128])  # a partial last page
    _compile(mla.mla_decode(2, 16, 4, 32, dv=64, dpe=32, block_H=16, threads=128), target)(*args)
    np.testing.assert_allclose(args[-1], mla.decode_reference(*args[:-1]), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_sparse_mla(target):
    q, kv, idx, o = mla.sparse_inputs(_rng("sparse_mla", target), 1, 3, 256, 16, 128, 64, 32, unused=70)
    _compile(mla.sparse_mla(1, 3, 256, 16, 128, dv=64, dpe=32, block_H=16, block_I=64, threads=128), target)(
        q, kv, idx, o)
    np.testing.assert_allclose(o, mla.sparse_reference(q, kv, idx, 64), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dim,causal", [(64, True), (128, False)])
def test_flash_attention_gqa_forward_and_backward(target, dim, causal):
    B, H, G, S = 1, 4, 2, 128  # two query heads per K/V head
    q, k, v, do = flash_attention.inputs(_rng("fa", dim, causal, target), B, H, G, S, dim)
    o, lse = np.zeros_like(q), np.zeros((B, H, S), np.float32)
    _compile(flash_attention.forward(B, H, G, S, dim, causal), target)(q, k, v, o, lse)
    delta = np.zeros((B, H, S), np.float32)
    _compile(flash_attention.backward_preprocess(B, H, S, dim), target)(o, do, delta)
    dq, dk, dv = np.zeros(q.shape, np.float32), np.zeros(k.shape, np.float32), np.zeros(v.shape, np.float32)
    threads = 256 if dim == 128 else 128  # as bench_zoo.py builds it (no spills on sm_80)
    _compile(flash_attention.backward(B, H, G, S, dim, causal, threads=threads), target)(q, k, v, do, lse, delta, dq,
                                                                                           dk, dv)
    want = flash_attention.reference(q, k, v, do, G, causal)
    for got, ref, name in zip((o, lse, dq, dk, dv), want, ("O", "LSE", "dQ", "dK", "dV")):
        np.testing.assert_allclose(got, ref, rtol=5e-3, atol=5e-3, err_msg=name)
