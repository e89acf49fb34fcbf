// Entry point of the emulator (see emulator.h).
#include "emulator/emulator.h"

#include "emulator/executor.h"

namespace tl::emu {

Result Run(const PrimFunc& lowered, const std::vector<void*>& args,
           const std::map<const VarNode*, double>& syms, const Options& opt) {
  Result result;
  Executor ex(opt, &result);
  ex.Run(lowered, args, syms);
  return result;
}

}  // namespace tl::emu
