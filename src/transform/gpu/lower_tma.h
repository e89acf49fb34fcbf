// TMA on sm_90 / sm_90a: which global->shared T.copy can be one or a few `cp.async.bulk.tensor`
// copies (TmaBlocker, used by LegalizeTileOpsGPU), and how (TmaPlan, used by LowerTileOpsGPU).
// The shared tile a TMA copy writes must have exactly the layout the rest of the lowering reads:
// HopperSharedOffset (layout/hopper_layout.h), i.e. 32/64/128-byte rows in the 32B/64B/128B swizzle,
// rows of a multiple of 128 bytes as 128-byte-wide panels in the 128B swizzle, other rows plain.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "transform/gpu_passes.h"

namespace tl {
struct TmaCopyNode;

struct TmaPlan {
  int swizzle = 0;           // bytes of the swizzle pattern: 0 (none), 32, 64 or 128
  int64_t panels = 1;        // copies side by side along the innermost axis (128-byte-wide panels)
  int64_t panel_cols = 0;    // elements of the innermost axis per copy
  std::vector<int64_t> box;  // per tensor axis (outermost first), the extent of one copy
  int64_t bytes = 0;         // bytes of the whole tile (every panel; out-of-bounds elements included)
  int64_t align = 128;       // byte alignment the shared destination needs
  // A TMA format's copy (TmaCopyNode::format): the kernel parameter the tensor map describes (the copy plans
  // over a view of it), and the format: 1 = 16U4_ALIGN16B (each 16 packed fp4 values, 8 bytes, land in the
  // first 8 of 16 shared bytes), 2 = 16U6_ALIGN16B (16 fp6 values, 12 bytes, in the first 12 of 16); the box
  // and dims count values, the transaction the packed bytes
  Buffer map_tensor;
  int format = 0;
};

/// Why `n` (a global->shared copy on a CUDA target with sm >= 90) cannot be lowered to TMA; "" when
/// it can, and then *plan says how. Shared buffers in `plain` (PlainSharedTiles) are laid out row-major, so
/// their copies take no swizzle.
std::string TmaBlocker(const CopyNode* n, const PassContext& ctx, TmaPlan* plan,
                       const std::set<const BufferNode*>& plain);

/// TmaBlocker for T.tma_copy: its TmaCopyNode::PlanCopy, and for a copy with a format the format's rules (a
/// box 128 values wide, no swizzle or the 128-byte one) and fields.
std::string TmaCopyBlocker(const TmaCopyNode& t, const PassContext& ctx, TmaPlan* plan,
                           const std::set<const BufferNode*>& plain);

/// The shared buffers of `body` whose layout is row-major whatever the target's swizzle: those its tile ops name
/// in TileOpNode::RowMajorShared (the scale-factor tiles tcgen05.cp reads in 16-byte rows).
std::set<const BufferNode*> PlainSharedTiles(const Stmt& body);

}  // namespace tl
