// The HIP (MFMA) side of the shared GPU passes: the layout rule of T.gemm on MFMA (called by
// LayoutInference when the target has `mfma`). The lowering side (T.gemm on v_mfma, reductions of
// mfma_C accumulators) is HIP's own, in src/target/hip/lower_gemm_mfma.cc.
#pragma once
#include "layout/mfma_fragment.h"
#include "target/gpu_features.h"
#include "transform/layout_rules.h"

namespace tl {

/// Gives the accumulator of `g` the mfma_C layout of its wave grid. Register operands (A or B in a
/// fragment) keep whatever layout their producer gives them: the MFMA lowering stages them through
/// LDS (the MFMA A layout is the transpose of the accumulator's, so an accumulator cannot be fed
/// back as an operand in place).
bool InferGemmMfma(LayoutRuleContext& c, const GemmNode* g, const GpuFeatures& features);

}  // namespace tl
