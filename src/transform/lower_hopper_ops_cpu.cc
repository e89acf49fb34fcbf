// CPU lowering of the Hopper tile ops (op/hopper_ops.h): the CPU gemm is synchronous, so
// T.wait_wgmma has nothing to wait for.
#include "op/hopper_ops.h"
#include "transform/lower_tile_ops_cpu_impl.h"

namespace tl {
namespace cpu_lowering {
namespace {
const CpuOpLoweringRegistrar kWaitWgmma("wait_wgmma",
                                        [](CpuTileLowerer&, const TileOpNode& n) -> Stmt { return Seq({}, n.span); });
}  // namespace
}  // namespace cpu_lowering
}  // namespace tl
