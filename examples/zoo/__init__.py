"""A zoo of the kernels this compiler exists for, each a TileLang-style program of this project's own with a
NumPy float64 reference: persistent and stream-K GEMM, dequantising GEMMs (int4 and fp4 e2m1 weights with
per-group scales, int8 x int8), block-causal and block-sparse attention, MLA decode over a paged KV cache and
DeepSeek V3.2's sparse MLA forward. tests/python/test_zoo.py runs each at small sizes on the CPU target and in
the emulator; benchmarks/bench_zoo.py prints their static figures for sm_80 and sm_90a at DeepSeek's sizes.

Every module has the same shape: a kernel factory (returns a T.prim_func), `inputs(rng, ...)` (NumPy arrays,
outputs included) and `reference(...)` (float64)."""
