// fence.proxy.async before wgmma only where generic-proxy writes reach its operands.
#pragma once
#include "transform/gpu_passes.h"

namespace tl {

/// After PlanSharedMemory: each tl.wgmma_operand_fence(operand tiles) that LowerGemmWgmma put before a
/// wgmma becomes fence.proxy.async where a generic-proxy write (a shared store, cp.async, ...) that can
/// run before it touches an operand's bytes, and goes where only TMA (the async proxy) writes them
/// (wgmma_proxy_fence.cc).
PrimFunc ElideWgmmaProxyFences(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
