// Resource usage read from a cubin's ELF image, for when ptxas' `-v` report is unavailable
// (an NVRTC that rejects -Xptxas, or a cubin from elsewhere). Reads the per-kernel sections
// ptxas writes: .text.<kernel> (register count in the top byte of sh_info, in older images),
// .nv.shared.<kernel> (static shared memory) and the EIATTR_REGCOUNT / EIATTR_FRAME_SIZE records of .nv.info.
// Spill sizes are not recorded in the image and stay -1. On sm_90 and newer the shared section
// also counts the 1 KB per block the system reserves, so shared_bytes exceeds ptxas' figure there.
#pragma once
#include <string>
#include <vector>

#include "target/cuda/nvrtc.h"

namespace tl::cuda {

/// One entry per kernel (a function with a .nv.info.<name> section), in section order.
/// Returns an empty vector when `cubin` is not a 64-bit ELF image or is truncated.
std::vector<KernelResources> ResourcesFromCubin(const std::string& cubin);

}  // namespace tl::cuda
