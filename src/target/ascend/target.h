// The Ascend target (docs/ascend.md): Huawei's AI Core as AscendC describes it publicly. A kernel block
// is one AI Core; there are no threads. Its on-chip buffers (L1, L0A, L0B, L0C, the Unified Buffer) have
// fixed capacities, and its data movement and compute run on separate pipes that only flags order.
#pragma once
#include <cstdint>
#include <string>

#include "ir/function.h"
#include "target/target.h"
#include "transform/pass_registry.h"

namespace tl {

/// One Ascend core architecture and its on-chip buffers (bytes), from the public AscendC guide.
struct AscendArch {
  const char* name;     // "dav-c220" / "dav-c310"
  const char* product;  // what it is sold as
  int64_t l1, l0a, l0b, l0c, ub;
  bool l0a_nz;  // the cube reads A from L0A in the NZ fractal format (dav-c310); else ZZ (dav-c220)
};

/// The architecture a target names (default dav-c220); a UserError listing the known ones otherwise.
const AscendArch& AscendArchOf(const Target& t);

/// Where an on-chip buffer lives. GM is global memory; WS a per-block global workspace the compiler uses to
/// move tiles between the cube and the vector core (L0C -> UB, UB -> L1).
enum class AscendPos : uint8_t { kGM, kL1, kL0A, kL0B, kL0C, kUB, kWS };
const char* AscendPosName(AscendPos p);
/// The start alignment (bytes) AscendC's memory manager gives buffers of a position.
int64_t AscendPosAlign(AscendPos p);

/// The pipes: data movement and compute queues that run concurrently (the scalar unit issues to them in
/// program order; each runs its own instructions in order). kS is the scalar unit itself: its reads of the
/// Unified Buffer (GetValue) need the writing pipe's flag, and what it issues after a read comes after it.
enum AscendPipe : int { kMTE2 = 0, kMTE1, kM, kFIX, kV, kMTE3, kS, kMTE2V, kNumPipes };
/// The core a pipe belongs to: the cube core (AIC: MTE2, MTE1, M, FIX) or the vector core (AIV: MTE2V -- its
/// own MTE2 --, V, MTE3, S). On dav-c220 they are separate cores; flags between them are cross-core flags.
inline bool AscendPipeOnCube(int pipe) {
  return pipe == kMTE2 || pipe == kMTE1 || pipe == kM || pipe == kFIX;
}
const char* AscendPipeName(int pipe);
int AscendPipeOf(const std::string& name);  // -1 when unknown

/// The attribute on the lowered kernel body that places an on-chip buffer: node the buffer, value its
/// position's name ("L1", "L0A", "L0B", "L0C", "UB").
inline constexpr const char* kAscendPosition = "ascend.position";

PassContext AscendPassContext(const Target& t, const PassConfig& pc);
Pipeline AscendPipeline(const PassContext& ctx);
/// AscendC C++ for a lowered kernel (include/tl_device/ascend/ declares what it calls).
std::string CodegenAscend(const PrimFunc& lowered, const Target& t);

}  // namespace tl
