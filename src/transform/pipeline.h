// What one pass of a pipeline did, for the lower trace (the pipelines: pass_registry.h).
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {

/// What one pass did, for the lower trace.
struct PassRecord {
  std::string name;
  PrimFunc result;
  double ms = 0;
  bool changed = false;
};

}  // namespace tl
