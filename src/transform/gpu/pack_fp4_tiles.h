// PackFp4Tiles (pack_fp4_tiles.cc): float4_e2m1fn tensors and tiles used only as the operands of
// block-scaled gemms stored two values a byte, for the backends whose instructions read fp4 so (sm_120a's
// NVFP4 mma.sync, gfx950's MXFP4 scaled MFMA). Each backend's pipeline runs it with its own rule for which
// gemms qualify.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>

#include "op/gemm_blockscaled.h"
#include "transform/pass_registry.h"

namespace tl {

/// Which T.mma_gemm_blockscaled calls take packed operands on the target (an fp4 tile in shared memory,
/// K-major, is checked by the pass itself), whether their two operands are packed together or each on its own
/// (`pair`), and the format's name for the choice table ("NVFP4").
struct Fp4PackRule {
  std::function<bool(const GemmBlockScaledNode&)> gemm;
  bool pair = true;
  std::string format;
  // Other ops whose operands may be fp4 tiles in the rule's form (each on its own): the fp4 shared regions an
  // op reads so (none: not such an op). Unset: none.
  std::function<std::vector<const Region*>(const TileOpNode&)> operands;
  // The tensor cores' padded form instead of two values a byte: such a tile keeps its shape as uint8 (16
  // values of K in the first 8 bytes of each 16), filled only by T.tma_copy from a packed tensor (marked
  // TmaCopyNode::fp4_padded: the TMA format 16U4_ALIGN16B). `mark` rebuilds an `operands` op with its changed
  // operands said (the map: every tile the pass changed, to its dtype before).
  bool padded = false;
  std::function<Stmt(const TileOpNode&, const std::map<const BufferNode*, DataType>&)> mark;
  // The fp6 dtypes (float6_e2m3fn / float6_e3m2fn), four values in 3 bytes (the first in the lowest bits),
  // instead of float4_e2m1fn: tensors uint8 [..., 3 K / 4], padded tiles 16 values in the first 12 of 16
  // bytes (16U6_ALIGN16B).
  bool fp6 = false;
};

/// Before LegalizeTileOpsGPU: fp4 tensor parameters only copied into fp4 shared tiles, and fp4 shared tiles
/// only copied into and used as (both, with `pair`) operands of gemms the rule takes, become uint8 ones of
/// half the last extent (two codes a byte, the first in the low nibble); the function's attribute
/// tl.packed_params lists the parameters so changed (src/target/backends.cc, python/tilelang/jit/kernel.py).
PrimFunc PackFp4Tiles(const PrimFunc& f, const PassContext& ctx, const Fp4PackRule& rule);

}  // namespace tl
