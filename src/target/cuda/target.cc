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
  // capabilities table): 163 KB on 8.0, 99 KB on 8.6 / 8.9 and on consumer Blackwell (12.x), 227 KB on
  // 9.0 and on the tcgen05 family (10.0, 10.3, 11.0).
  switch (t.sm) {
    case 80: t.smem_limit = 163 * 1024; break;
    case 86:
    case 87:
    case 89:
    case 120:
    case 121: t.smem_limit = 99 * 1024; break;
    case 90:
    case 100:
    case 103:
    case 110: t.smem_limit = 227 * 1024; break;
    default:
      throw UserError(ErrorKind::kUnsupported,
                      "target '" + spec + "': architecture " + t.arch +
                          " is not supported by the CUDA backend (supported: sm_80, sm_86, sm_89, sm_90, sm_90a, "
                          "sm_100 / sm_100a, sm_103 / sm_103a, sm_110 / sm_110a, sm_120 / sm_120a, sm_121 / sm_121a)");
  }
  return t;
}

GpuFeatures CudaFeatures(const CudaTarget& t) {
  GpuFeatures f;
  f.name = "CUDA";
  f.arch = t.arch;
  f.label = t.arch;
  f.matrix = MatrixUnit::kMmaSync;
  f.fp8_mma = t.sm >= 89;  // mma.sync m16n8k32 e4m3 / e5m2
  f.wgmma = t.arch == "sm_90a";  // wgmma exists on sm_90a only (Blackwell's tensor cores are tcgen05 / mma.sync)
  f.tma = t.sm >= 90;
  f.clusters = t.sm >= 90;
  f.clc = t.sm >= 100;
  f.tcgen05 = (t.sm == 100 || t.sm == 103 || t.sm == 110) && t.arch.back() == 'a';
  f.setmaxnreg = t.arch.back() == 'a' && t.sm >= 90;
  f.clc_multicast = f.tcgen05;              // the 'a' targets of the tcgen05 family
  f.tcgen05_i8 = f.tcgen05 && t.sm != 103;  // ptxas: .kind::i8 is not supported on sm_103a  // ptxas takes setmaxnreg on sm_90a and sm_1xxa
  f.block_scale_mma_sync = (t.sm == 120 || t.sm == 121) && t.arch.back() == 'a';  // ptxas: sm_120a / sm_121a
  f.vector_atomic_add = t.sm >= 90;
  f.stmatrix = t.sm >= 90;
  f.async_copy = AsyncCopy::kCpAsync;
  f.swizzle = t.sm >= 90 ? SharedSwizzle::kTma : SharedSwizzle::kXor;
  f.shuffle = true;
  f.cuda_source = true;  // NVRTC / nvcc: T.import_source and T.call_extern
  f.named_barriers = true;  // bar.sync id, count
  f.grid_sync = true;       // cooperative_groups::this_grid().sync(), cuLaunchCooperativeKernel
  f.wave = 32;
  f.vector_shared_loads = true;
  f.vector_shared_stores = false;
  f.vector_register_shared_stores = true;  // st.shared.b32 / .v2 / .v4
  f.int_to_global_pointer = true;
  f.smem_limit = t.smem_limit;
  f.max_threads = t.max_threads;
  return f;
}

CudaTarget CudaTargetOf(const Target& t) { return ParseCudaTarget(t.arch.empty() ? "sm_80" : t.arch); }

}  // namespace tl
