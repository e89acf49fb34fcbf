// The pass pipeline of each target: a short, readable list of PrimFunc -> PrimFunc passes.
#pragma once
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl {

/// What one pass did, for the lower trace.
struct PassRecord {
  std::string name;
  PrimFunc result;
  double ms = 0;
  bool changed = false;
};

/// Tile program -> thread-level program for the host. When `trace` is given, records the IR
/// after every pass.
PrimFunc LowerForCPU(const PrimFunc& f, std::vector<PassRecord>* trace = nullptr);

}  // namespace tl
