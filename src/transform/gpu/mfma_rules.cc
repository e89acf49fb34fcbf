// The T.gemm layout rule on MFMA targets; see mfma_rules.h.
#include "transform/gpu/mfma_rules.h"

#include "op/gemm.h"
#include "support/error.h"
#include "transform/gpu_util.h"

namespace tl {

using namespace gpu_pass;

bool InferGemmMfma(LayoutRuleContext& c, const GemmNode* g, const GpuFeatures& features) {
  if (g->C.buffer->scope != Scope::kFragment)
    throw UserError(ErrorKind::kUnsupported,
                    "T.gemm on HIP needs its accumulator C in a fragment (T.alloc_fragment)", g->span);
  auto cd = TileDims(g->C);
  if (cd.size() != 2) throw UserError(ErrorKind::kType, "T.gemm accumulator must be a 2-D tile", g->span);
  int64_t M = ConstOr(g->C.ranges[cd[0]].extent, g->span, "the gemm tile"),
          N = ConstOr(g->C.ranges[cd[1]].extent, g->span, "the gemm tile");
  if (c.threads() % 64)
    throw UserError(ErrorKind::kLayout,
                    "T.gemm on HIP needs a whole number of 64-thread waves (MFMA is a wave64 instruction); "
                    "the kernel has " +
                        std::to_string(c.threads()) + " threads",
                    g->span);
  int policy = static_cast<int>(g->policy);
  std::pair<int64_t, int64_t> grid;
  try {
    grid = MfmaWaveGrid(M, N, c.threads() / 64, policy);
  } catch (const UserError& e) {
    throw UserError(ErrorKind::kLayout, e.raw_message(), g->span);
  }
  // 32x32 tiles where each wave's share allows them (half the operand reads per product of the 16x16
  // shapes), else 16x16; 8-bit floats take 16x16x32 where the FNUZ formats are read (CDNA3 lowers only
  // that shape here), either shape on CDNA4 (32x32x16 fp8).
  auto fp8 = [](DataType t) {
    return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2;
  };
  bool r16 = (fp8(g->A.buffer->dtype) || fp8(g->B.buffer->dtype)) && features.mfma_fp8 != "ocp";
  int64_t R = !r16 && (M / grid.first) % 32 == 0 && (N / grid.second) % 32 == 0 ? 32 : 16;
  return c.Assign(g->C.buffer, MfmaAccumulator(M, N, grid.first, grid.second, R), "T.gemm accumulator (MFMA)",
                  g->span);
}

}  // namespace tl
