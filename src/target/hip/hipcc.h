// The HIP toolchain: Debian's / ROCm's hipcc (clang with the AMDGPU target) turns the generated
// source into a code object (an AMDGPU ELF) for one gfx arch, without a GPU; a newer clang takes the
// archs that hipcc does not know. One invocation
// (-save-temps) yields both the code object and its assembly; the resource usage is read from the
// assembly's kernel descriptor (.amdhsa_*) and the compiler's `; NumVgprs:`-style comments.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace tl {
namespace hip {

struct CompileResult {
  std::string code_object;  // the ELF bytes
  std::string assembly;     // the .s text
  std::string log;          // the compiler's diagnostics
  std::string compiler;     // the hipcc version line
};

/// The hipcc to use: $TL_HIPCC, else `hipcc` on PATH; "" when there is none.
std::string HipccPath();
/// A clang (17 or newer, $TL_HIP_CLANG or clang++-NN) used for the archs hipcc does not know; "" if none.
std::string HipClangPath();
/// The flags every device compile passes (part of the disk-cache key: a flag change rebuilds).
std::string CompileFlags();
/// The toolchain's version lines, hipcc's and the fallback clang's (memoised; part of the cache key).
std::string HipccVersion();
/// Whether `arch` is built with ziglang's clang (gfx950: no Debian clang or device library knows it).
bool NeedsZig(const std::string& arch);
/// The zig executable ($TL_ZIG, set by the Python package from the installed `ziglang`, else `zig` on PATH).
std::string ZigPath();
/// The version lines of the toolchain that builds `arch` (part of the cache key).
std::string ToolchainVersion(const std::string& arch);
/// Compiles `source` for `arch` with `include_dir` on the include path: with hipcc, or, for an arch
/// hipcc does not know (gfx942 with ROCm 5.2), with the fallback clang and the ROCm device libraries
/// linked explicitly; for gfx950 with ziglang's clang and no device libraries. Throws a UserError
/// (kUnsupported) when no toolchain can build for the arch, and (kCompile) with the log when the compilation
/// fails.
CompileResult Compile(const std::string& source, const std::string& arch, const std::string& include_dir);

/// Resource usage from the assembly: vgprs, agprs, sgprs, lds_bytes, scratch_bytes (private
/// segment per lane), spill_vgprs, spill_sgprs, occupancy (waves per SIMD), mfma_count.
std::map<std::string, int64_t> ParseResources(const std::string& assembly);

}  // namespace hip
}  // namespace tl
