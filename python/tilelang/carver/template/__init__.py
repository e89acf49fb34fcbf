"""TileLang's carver templates: an operator description that, given an architecture, recommends tilings.

``MatmulTemplate(M=, N=, K=, in_dtype=, out_dtype=, accum_dtype=, trans_A=, trans_B=, with_bias=)
.with_arch(CUDA("cuda")).recommend_hints(topk)`` works (this compiler's GEMM roller, roller/policy.py);
``equivalent_function()`` is a @T.prim_func of the same GEMM. The other templates TileLang has (GEMV,
elementwise, general reduction, FlashAttention, convolution) raise a TileLangUnsupportedError when made."""
from ...errors import TileLangArgumentError, TileLangUnsupportedError
from ..roller.policy import matmul_hints


class BaseTemplate:
    """What every template shares: the architecture it is tuned for."""

    _arch = None

    def with_arch(self, arch):
        if arch is None or not hasattr(arch, "smem_cap"):
            raise TileLangArgumentError(f"with_arch takes a tilelang.carver.arch description (CUDA(...), CDNA(...)), "
                                        f"got {arch!r}")
        self._arch = arch
        return self

    def has_arch(self):
        return self._arch is not None

    @property
    def arch(self):
        return self._arch

    def is_volta_arch(self):
        return getattr(self._arch, "sm_version", 0) == 70

    def is_ampere_arch(self):
        return 80 <= getattr(self._arch, "sm_version", 0) < 90

    def is_cdna_arch(self):
        return getattr(self._arch, "platform", "") == "CDNA"

    def is_rdna_arch(self):
        return False

    def get_hardware_aware_configs(self, arch=None, topk=10):
        raise NotImplementedError

    def recommend_hints(self, topk=10):
        if self._arch is None:
            raise TileLangArgumentError(f"{type(self).__name__}.recommend_hints: call with_arch(arch) first")
        return self.get_hardware_aware_configs(self._arch, topk)


class MatmulTemplate(BaseTemplate):
    """C[M, N] = A[M, K] x B, B stored [N, K] when trans_B (TileLang's default), [K, N] otherwise."""

    def __init__(self, M=None, N=None, K=None, trans_A=False, trans_B=True, in_dtype="float16", out_dtype="float16",
                 accum_dtype="float16", with_bias=False):
        for name, v in (("M", M), ("N", N), ("K", K)):
            if not isinstance(v, int) or v <= 0:
                raise TileLangArgumentError(f"MatmulTemplate needs a positive integer {name}, got {v!r}")
        if trans_A:
            raise TileLangUnsupportedError("MatmulTemplate(trans_A=True): the roller plans A as [M, K] only")
        self.M, self.N, self.K = M, N, K
        self.trans_A, self.trans_B = bool(trans_A), bool(trans_B)
        self.in_dtype, self.out_dtype, self.accum_dtype = str(in_dtype), str(out_dtype), str(accum_dtype)
        self.with_bias = bool(with_bias)

    def get_hardware_aware_configs(self, arch=None, topk=10):
        return matmul_hints(self.M, self.N, self.K, arch or self._arch, self.in_dtype, self.accum_dtype, topk,
                            self.trans_B)

    def equivalent_function(self):
        """The GEMM as a tile program (64 x 64 x 32 tiles, 128 threads); with_bias adds Bias[N]."""
        from ... import language as T

        M, N, K, ind, outd, accd = self.M, self.N, self.K, self.in_dtype, self.out_dtype, self.accum_dtype
        b_shape = (N, K) if self.trans_B else (K, N)
        trans_b, bias = self.trans_B, self.with_bias

        @T.prim_func
        def matmul(A: T.Tensor((M, K), ind), B: T.Tensor(b_shape, ind), Bias: T.Tensor((N,), outd),
                   C: T.Tensor((M, N), outd)):
            with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
                A_s = T.alloc_shared((64, 32), ind)
                B_s = T.alloc_shared((64, 32) if trans_b else (32, 64), ind)
                C_l = T.alloc_fragment((64, 64), accd)
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                    T.copy(A[by * 64, k * 32], A_s)
                    if trans_b:
                        T.copy(B[bx * 64, k * 32], B_s)
                    else:
                        T.copy(B[k * 32, bx * 64], B_s)
                    T.gemm(A_s, B_s, C_l, transpose_B=trans_b)
                if bias:
                    for i, j in T.Parallel(64, 64):
                        C_l[i, j] += Bias[bx * 64 + j]
                T.copy(C_l, C[by * 64, bx * 64])

        return matmul

    def params_as_dict(self):
        return {"M": self.M, "N": self.N, "K": self.K, "trans_A": self.trans_A, "trans_B": self.trans_B,
                "in_dtype": self.in_dtype, "out_dtype": self.out_dtype, "accum_dtype": self.accum_dtype,
                "with_bias": self.with_bias}

    def __repr__(self):
        return f"MatmulTemplate({', '.join(f'{k}={v!r}' for k, v in self.params_as_dict().items())})"


def _unsupported(name):
    class Unsupported(BaseTemplate):
        def __init__(self, *args, **kwargs):
            raise TileLangUnsupportedError(
                f"tilelang.carver.template.{name} is not supported by TileLang-C++: its roller plans GEMMs only "
                "(MatmulTemplate); give @tilelang.autotune an explicit list of configurations")

    Unsupported.__name__ = Unsupported.__qualname__ = name
    return Unsupported


GEMVTemplate = _unsupported("GEMVTemplate")
ElementwiseTemplate = _unsupported("ElementwiseTemplate")
GeneralReductionTemplate = _unsupported("GeneralReductionTemplate")
FlashAttentionTemplate = _unsupported("FlashAttentionTemplate")
ConvTemplate = _unsupported("ConvTemplate")
