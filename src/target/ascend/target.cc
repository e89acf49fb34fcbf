// The Ascend target's architectures, positions and pipes, and its pipeline; see target.h.
#include "target/ascend/target.h"

#include "support/error.h"
#include "target/dtype_check.h"

namespace tl {

PrimFunc LowerAscendTileOps(const PrimFunc& f, const PassContext& ctx);  // lower_ascend.cc
PrimFunc InsertAscendSync(const PrimFunc& f, const PassContext& ctx);    // ascend_sync.cc

namespace {

// On-chip capacities per AI Core, from the public AscendC programming guide's hardware figures.
// clang-format off
const AscendArch kArchs[] = {
    {"dav-c220", "Atlas A2/A3 (Ascend 910B/910C)", 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024, 192 * 1024, false},
    {"dav-c310", "Ascend 950 (A5)",                512 * 1024, 64 * 1024, 64 * 1024, 256 * 1024, 248 * 1024, true},
};
// clang-format on

// The OCP MX sub-byte floats (fp4, fp6) and the E8M0 scale have no AscendC type (dtype_check.h).
PrimFunc CheckAscendTypes(const PrimFunc& f, const PassContext&) {
  DtypeCheck("Ascend", [](DataType t) {
    return t.is_mx_float() || t.code() == DataType::Code::kFloat8E8M0
               ? t.str() + " (AscendC has no such type)"
               : std::string();
  }).Run(f);
  return f;
}

}  // namespace

const AscendArch& AscendArchOf(const Target& t) {
  const std::string a = t.arch.empty() ? "dav-c220" : t.arch;
  for (auto& x : kArchs)
    if (a == x.name) return x;
  std::string known;
  for (auto& x : kArchs) known += (known.empty() ? "" : ", ") + std::string(x.name) + " (" + x.product + ")";
  throw UserError(ErrorKind::kUnsupported, "Ascend architecture '" + a + "' is not known; known: " + known);
}

const char* AscendPosName(AscendPos p) {
  switch (p) {
    case AscendPos::kGM: return "GM";
    case AscendPos::kL1: return "L1";
    case AscendPos::kL0A: return "L0A";
    case AscendPos::kL0B: return "L0B";
    case AscendPos::kL0C: return "L0C";
    case AscendPos::kUB: return "UB";
    case AscendPos::kWS: return "WS";
  }
  return "?";
}

int64_t AscendPosAlign(AscendPos p) {
  switch (p) {
    case AscendPos::kL0A:
    case AscendPos::kL0B: return 512;
    case AscendPos::kL0C: return 64;
    default: return 32;
  }
}

const char* AscendPipeName(int pipe) {
  static const char* names[kNumPipes] = {"MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S", "MTE2V"};
  return pipe >= 0 && pipe < kNumPipes ? names[pipe] : "?";
}

int AscendPipeOf(const std::string& name) {
  for (int p = 0; p < kNumPipes; ++p)
    if (name == AscendPipeName(p)) return p;
  return -1;
}

PassContext AscendPassContext(const Target& t, const PassConfig& pc) {
  AscendArchOf(t);  // an unknown arch is an error before anything runs
  return {{}, {}, nullptr, t, pc};
}

Pipeline AscendPipeline(const PassContext&) {
  return {
      {"CheckAscendTypes", CheckAscendTypes, IRStage::kTile},
      Step("ExpandViewTileOps"),
      Step("Simplify"),
      Step("RasterizeBlocks"),
      Step("ResolveBufferViews"),
      {"LowerAscendTileOps", LowerAscendTileOps, IRStage::kThread},
      {"InsertAscendSync", InsertAscendSync, IRStage::kThread},
  };
}

}  // namespace tl
