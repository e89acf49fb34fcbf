// Target parsing and limits; see target.h.
#include "target/target.h"

#include <algorithm>
#include <sstream>

#include "support/error.h"
#include "support/file_util.h"
#include "target/backend.h"
#include "target/cpu/isa.h"
#include "target/cuda/target.h"

namespace tl {
namespace {

[[noreturn]] void Bad(const std::string& spec, const std::string& why) {
  throw UserError(
      ErrorKind::kUnsupported,
      "target '" + spec + "': " + why +
          ". Targets: cpu (c, llvm, host) [-mcpu=NAME] [-mattr=+feat,...], cuda [-arch=sm_80|sm_86|sm_89|"
          "sm_90|sm_90a], hip [-arch=gfx90a|gfx940|gfx942|gfx950], metal, opencl "
          "[-mattr=+subgroups|-subgroups], "
          "auto; or {\"kind\": ..., \"arch\": ..., \"features\": [...]}");
}

}  // namespace

bool Target::Has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

std::string Target::str() const {
  std::string s = kind;
  if (arch_given && !arch.empty()) s += kind == "cpu" ? " -mcpu=" + arch : " -arch=" + arch;
  if (kind == "cpu") s += CpuAttrDiff(*this);
  if (kind == "metal" && Has("metal4")) s += " -mattr=+metal4";
  if (kind == "opencl" && features_given) s += Has("subgroups") ? " -mattr=+subgroups" : " -mattr=-subgroups";
  return s;
}

Target ParseTarget(const std::string& spec) {
  std::vector<std::string> words = SplitNonEmpty(spec, ' ');
  if (words.empty()) Bad(spec, "empty target");
  Target t;
  std::string head = words[0];
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  auto colon = head.find(':');
  if (colon != std::string::npos) {  // "cuda:sm_80"
    t.arch = head.substr(colon + 1);
    t.arch_given = true;
    head = head.substr(0, colon);
  }
  if (head.rfind("sm_", 0) == 0) {  // a bare "sm_86"
    t.arch = head;
    t.arch_given = true;
    head = "cuda";
  }
  if (head == "c" || head == "llvm" || head == "host") head = "cpu";
  const bool builtin =
      head == "cpu" || head == "cuda" || head == "hip" || head == "metal" || head == "opencl";
  // A kind a backend registered itself for (docs/adding_a_backend.md): "<kind> [-arch=<name>]"; its
  // backend's pass context says what it offers.
  if (!builtin) {
    const std::vector<std::string> kinds = BackendKinds();
    if (std::find(kinds.begin(), kinds.end(), head) == kinds.end())
      Bad(spec, "unknown target kind '" + words[0] + "'");
  }
  t.kind = head;
  std::vector<std::string> attrs;
  for (size_t i = 1; i < words.size(); ++i) {
    std::string w = words[i], key, value;
    auto eq = w.find('=');
    if (w.rfind("-", 0) != 0) Bad(spec, "expected an option such as -arch=..., got '" + w + "'");
    key = w.substr(w.find_first_not_of('-'),
                   eq == std::string::npos ? std::string::npos : eq - w.find_first_not_of('-'));
    if (eq != std::string::npos) {
      value = w.substr(eq + 1);
    } else if (i + 1 < words.size() && words[i + 1].rfind("-", 0) != 0) {
      value = words[++i];  // "-arch sm_90a"
    }
    if (value.empty()) Bad(spec, "option -" + key + " needs a value");
    if (key == "arch" && t.kind != "cpu") {
      t.arch = value;
      t.arch_given = true;
    } else if (key == "mcpu" && (t.kind == "cpu" || t.kind == "hip")) {  // TVM's ROCm spelling: -mcpu=gfx942
      t.arch = value;
      t.arch_given = true;
    } else if (key == "mattr" && (t.kind == "cpu" || t.kind == "opencl" || t.kind == "metal")) {
      for (auto& a : SplitNonEmpty(value, ',')) attrs.push_back(a);
    } else {
      Bad(spec, "unknown option -" + key + " for target kind " + t.kind);
    }
  }
  if (t.kind == "cpu") {
    if (!t.arch_given)
      t.features = CpuHostFeatures();
    else if (!CpuFeaturesOfName(t.arch, &t.features))
      Bad(spec, "unknown CPU '" + t.arch + "' (known: " + CpuKnownNames() + ")");
    for (auto& a : attrs) {  // -mattr=+avx512f,-avx2: adds with what it needs, removes with what needs it
      std::string why = CpuApplyAttr(a, &t.features);
      if (!why.empty()) Bad(spec, why);
    }
    t.smem_limit = 1 << 20;  // "shared" tiles of a CPU block (issue: per-block on-chip budget)
    t.max_threads = 1024;
    t.warp_size = 1;
  } else if (t.kind == "cuda") {
    CudaTarget c = ParseCudaTarget(t.arch.empty() ? "cuda" : t.arch);
    if (t.arch.empty()) t.arch = c.arch;
    t.smem_limit = c.smem_limit;
    t.max_threads = c.max_threads;
    t.max_registers = 255;
    t.warp_size = 32;
    t.features = {"cp_async", "ldmatrix", "mma_sync"};
    if (c.sm >= 90) t.features.push_back("tma");
    if (t.arch == "sm_90a") t.features.push_back("wgmma");
  } else if (t.kind == "hip") {
    if (t.arch.empty()) t.arch = "gfx90a";
    if (t.arch != "gfx90a" && t.arch != "gfx940" && t.arch != "gfx941" && t.arch != "gfx942" &&
        t.arch != "gfx950")
      Bad(spec, "HIP architecture " + t.arch + " is not known (gfx90a, gfx940, gfx941, gfx942, gfx950)");
    t.smem_limit = (t.arch == "gfx950" ? 160 : 64) * 1024;  // CDNA4 has 160 KB of LDS per CU
    t.max_threads = 1024;
    t.max_registers = 512;
    t.warp_size = 64;
    t.features = {"mfma"};
  } else if (t.kind == "metal") {
    t.smem_limit = 32 * 1024;
    t.max_threads = 1024;
    t.warp_size = 32;
    t.features = {"simdgroup_matrix"};
    // -mattr=+metal4: Metal 4 (MSL 4.0, apple10 GPUs: M5 and later): T.gemm on Metal Performance Primitives'
    // matmul2d with cooperative tensors (docs/metal.md); TileLang spells it as the target key "metal4".
    for (auto& a : attrs) {
      std::string f = a.substr(a[0] == '+' || a[0] == '-' ? 1 : 0);
      if (f != "metal4")
        Bad(spec,
            "unknown Metal feature '" + f + "' (Metal features: metal4, i.e. MSL 4.0 tensor operations)");
      t.features.erase(std::remove(t.features.begin(), t.features.end(), f), t.features.end());
      if (a[0] != '-') t.features.push_back(f);
    }
  } else if (t.kind == "opencl") {  // the guaranteed minimums; the device may offer more
    t.smem_limit = 32 * 1024;
    t.max_threads = 256;
    t.warp_size = 1;
    // -mattr=+subgroups: reductions use cl_khr_subgroups (the device must offer it); -subgroups: they
    // never do; no -mattr: the device's CL_DEVICE_EXTENSIONS decide when the kernel will run there.
    for (auto& a : attrs) {
      std::string f = a.substr(a[0] == '+' || a[0] == '-' ? 1 : 0);
      if (f == "cl_khr_subgroups") f = "subgroups";
      if (f != "subgroups")
        Bad(spec, "unknown OpenCL feature '" + f + "' (OpenCL features: subgroups, i.e. cl_khr_subgroups)");
      t.features.erase(std::remove(t.features.begin(), t.features.end(), f), t.features.end());
      if (a[0] != '-') t.features.push_back(f);
      t.features_given = true;
    }
  }  // a registered kind: no limits here (its backend's GpuFeatures hold them)
  std::sort(t.features.begin(), t.features.end());
  return t;
}

}  // namespace tl
