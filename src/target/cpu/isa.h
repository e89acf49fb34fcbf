// CPU instruction sets: what the host offers (cpuid / xgetbv), what a -mcpu name implies, how
// -mattr edits close over feature dependencies, and which micro-kernel family a CPU target gets
// (AVX-512, AVX2+FMA or portable vector extensions) with the host-compiler flags that match it.
#pragma once
#include <string>
#include <vector>

namespace tl {

struct Target;

/// Features of the machine this process runs on, sorted: x86 through cpuid, with the register
/// state the OS enables (xgetbv) for AVX / AVX-512 / AMX; "neon" on AArch64.
std::vector<std::string> CpuHostFeatures();

/// The feature names -mattr accepts (sorted).
const std::vector<std::string>& CpuKnownFeatures();

/// Features of a -mcpu name ("native" = the host). Returns false for an unknown name.
bool CpuFeaturesOfName(const std::string& name, std::vector<std::string>* out);

/// The -mcpu names CpuFeaturesOfName knows, for error messages.
std::string CpuKnownNames();

/// Applies one -mattr item ("+avx512f", "-avx2", "f16c") to a feature list: adding a feature adds
/// what it requires (avx512f -> avx2, fma, f16c, avx), removing one removes what requires it.
/// Returns an error message for an unknown feature, "" on success. The list stays sorted.
std::string CpuApplyAttr(const std::string& attr, std::vector<std::string>* features);

/// The micro-kernel family and host-compiler flags of a CPU target.
struct CpuIsa {
  int level = 1;           // TL_CPU_ISA in the generated code: 3 AVX-512, 2 AVX2+FMA, 1 portable
  std::string name;        // "avx512", "avx2", "portable"
  std::string gemm;        // the fp32 micro-kernel, e.g. "14x32 zmm"
  std::string arch_flags;  // -march/-m flags that enable exactly the target's features
};
CpuIsa ChooseCpuIsa(const Target& t);

/// The processor family ("arm", "x86") of the target's features when it is not the host's, e.g.
/// "arm" for `cpu -mcpu=armv8-a` on x86; "" otherwise. Such a kernel can be generated, not built.
std::string CpuForeignFamily(const Target& t);
/// "x86", "arm" or "other": what the host compiler builds for.
const char* CpuHostFamily();

/// The -mattr suffix that turns the features of the target's -mcpu (or the host) into t.features;
/// "" when they are the same. Part of Target::str() for CPU targets.
std::string CpuAttrDiff(const Target& t);

}  // namespace tl
