// Hopper wgmma for T.gemm on sm_90a: whether a gemm can use wgmma.mma_async (and how its block's
// warp groups split the tile), and its lowering. LayoutInference asks PlanWgmma when it fixes the
// accumulator layout; LowerTileOpsGPU lowers a gemm whose accumulator has the wgmma layout (a fact
// in the IR) with LowerGemmWgmma.
#pragma once
#include <map>

#include "layout/user_layout.h"
#include <string>

#include "op/gemm.h"
#include "target/gpu_features.h"
#include "transform/gpu_options.h"

namespace tl {

struct WgmmaPlan {
  bool ok = false;
  std::string why;  // when !ok: the reason, for the user
  int64_t M = 0, N = 0, K = 0;
  int64_t wgm = 0, wgn = 0;               // warp groups along M and N
  int64_t n_inst = 0;                     // N of one instruction (m64nNkK)
  int64_t kstep = 16;                     // K of one instruction: 16 (f16/bf16) or 32 (fp8)
  bool stage_a = false, stage_b = false;  // fp8 operand stored MN-major: copied into a K-major tile first
};

/// A shared operand of wgmma: a 2-D tile of a shared buffer, i.e. its last two dimensions from a constant
/// corner (`S[:, 256:512]`) at one index of each leading dimension (`S[k % 2, :, :]`), in the buffer's layout.
struct WgmmaOperand {
  std::vector<int64_t> shape;   // the tile's rows x cols
  Expr row0, col0;              // its corner in the buffer's last two dimensions (`j * 64` in an unrolled loop)
  int64_t rows = 0, cols = 0;   // the rows and columns of the buffer's layout (leading dimensions fold into rows)
};
/// `r` as a wgmma operand; false when it is not one.
bool WgmmaOperandOf(const Region& r, WgmmaOperand* o);

/// Whether `g` can run on wgmma on a target with `features` (and `opt`: tl.disable_wgmma) with
/// `threads` threads, and its split.
/// `user` (may be null): shared tiles with a layout from T.annotate_layout, which wgmma cannot read.
WgmmaPlan PlanWgmma(const GemmNode* g, const GpuFeatures& features, const GpuOptions& opt,
                    int64_t threads, const std::map<const BufferNode*, SharedLayout>* user = nullptr);

/// The Hopper intrinsics a kernel may call directly (T.mbarrier_*, T.fence_proxy_async) need the
/// async proxy of TMA targets, T.set_max_nreg needs wgmma's: a UserError at `sp` elsewhere. Other
/// expressions pass.
void CheckHopperCall(const Expr& e, const GpuFeatures& features, const Span& sp);
/// The thread-block cluster calls (T.block_rank_in_cluster, T.cluster_sync / _arrive / _arrive_relaxed /
/// _wait, T.mbarrier_arrive(bar, cta_id)), and the DSL name of one.
bool IsClusterOp(const std::string& op);
std::string ClusterOpName(const std::string& op);

/// Calls the CPU target cannot run (mbarriers and the other Hopper intrinsics, cp.async, warp votes and
/// shuffles, user CUDA code): the first in `body` is a UserError at its line
/// (lower_hopper_ops_cpu.cc).
void RejectGpuOnlyCallsOnCPU(const Stmt& body);

namespace gpu_lowering {
class GpuTileLowerer;
/// The swizzle mode and strides of a wgmma / tcgen05 operand tile of `shape` (rows x cols of its buffer's layout)
/// in the compiler's sm_90+ shared layout.
struct OperandDesc {
  int64_t lbo = 0, sbo = 0, mode = 0;  // mode: 1 = 128B, 2 = 64B, 3 = 32B (wgmma's encoding)
};
OperandDesc DescOf(const std::vector<int64_t>& shape, bool mn_major, int eb);
/// The descriptor (built by `op`: tl.wgmma_desc or tl.tcgen05_desc, with swizzle `mode` in its encoding) of
/// element (row, col) of operand tile `o` of `r`: the tile's base descriptor plus the element's offset in 16-byte
/// units (tl.wgmma_desc_add), or built whole where that offset is not provably a multiple of 16 bytes.
Expr OperandDescriptor(GpuTileLowerer& L, const Region& r, const WgmmaOperand& o, const Expr& row, const Expr& col,
                       const OperandDesc& d, bool per_wg, int eb, const std::string& op, int64_t mode);
/// Thread-level statements of a wgmma gemm: wgmma.fence, the m64nNk16 instructions over the k16
/// steps with shared-memory matrix descriptors, commit_group and wait_group.
Stmt LowerGemmWgmma(GpuTileLowerer& L, const GemmNode* g);
/// Records, on sm_90a, why a gemm lowered to mma.sync instead of wgmma (a performance warning).
void NoteNoWgmma(GpuTileLowerer& L, const GemmNode* g);
}  // namespace gpu_lowering

/// Thread-level `body` without its wgmma.wait_group calls when it issues no wgmma: its gemms are
/// synchronous, so T.wait_wgmma has nothing to wait for (docs/hopper.md), and in a block that is not
/// whole warp groups the warp-group-collective wait would run on part of one.
Stmt DropWgmmaWaitsWithoutWgmma(const Stmt& body);

}  // namespace tl
