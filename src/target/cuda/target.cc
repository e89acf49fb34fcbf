#include "target/cuda/target.h"

#include <regex>

#include "support/error.h"

namespace tl {

CudaTarget ParseCudaTarget(const std::string& spec) {
  CudaTarget t;
  std::smatch m;
  static const std::regex arch_re("sm_([0-9]+)(a?)");
  if (std::regex_search(spec, m, arch_re)) {
    t.sm = std::stoi(m[1].str());
    t.arch = "sm_" + m[1].str() + m[2].str();
  }
  // Shared memory per block with the opt-in attribute (CUDA programming guide, compute
  // capabilities table): 163 KB on 8.0, 99 KB on 8.6 / 8.9, 227 KB on 9.0.
  switch (t.sm) {
    case 80: t.smem_limit = 163 * 1024; break;
    case 86:
    case 87:
    case 89: t.smem_limit = 99 * 1024; break;
    case 90: t.smem_limit = 227 * 1024; break;
    default:
      throw UserError(
          ErrorKind::kUnsupported,
          "target '" + spec + "': architecture " + t.arch +
              " is not supported by the CUDA backend (supported: sm_80, sm_86, sm_89, sm_90, sm_90a)");
  }
  return t;
}

}  // namespace tl
