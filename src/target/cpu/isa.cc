// CPU feature detection, -mcpu names, -mattr closure and the micro-kernel choice; see isa.h.
#include "target/cpu/isa.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "support/error.h"
#include "target/target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tl {
namespace {

struct FeatureInfo {
  const char* name;
  const char* family;                  // "x86" or "arm": a feature of the other family is rejected
  std::vector<const char*> requires_;  // features it implies (the compilers' -m flags imply them too)
};

// Every feature -mattr accepts; the names are the GCC/Clang -m flags' names.
const std::vector<FeatureInfo>& Features() {
  static const std::vector<FeatureInfo> v = {
      {"sse4.2", "x86", {}},
      {"avx", "x86", {"sse4.2"}},
      {"avx2", "x86", {"avx"}},
      {"fma", "x86", {"avx"}},
      {"f16c", "x86", {"avx"}},
      {"avx512f", "x86", {"avx2", "fma", "f16c"}},
      {"avx512bw", "x86", {"avx512f"}},
      {"avx512vl", "x86", {"avx512f"}},
      {"avx512dq", "x86", {"avx512f"}},
      {"avx512cd", "x86", {"avx512f"}},
      {"avx512vnni", "x86", {"avx512f"}},
      {"avx512bf16", "x86", {"avx512bw"}},
      {"avx512fp16", "x86", {"avx512bw", "avx512vl", "avx512dq"}},
      {"amx-tile", "x86", {}},
      {"amx-bf16", "x86", {"amx-tile"}},
      {"amx-int8", "x86", {"amx-tile"}},
      {"neon", "arm", {}},
  };
  return v;
}

const FeatureInfo* Find(const std::string& name) {
  for (auto& f : Features())
    if (name == f.name) return &f;
  return nullptr;
}

bool HasF(const std::vector<std::string>& v, const std::string& f) {
  return std::find(v.begin(), v.end(), f) != v.end();
}

void Add(const std::string& f, std::vector<std::string>* v) {
  if (HasF(*v, f)) return;
  v->push_back(f);
  for (const char* r : Find(f)->requires_) Add(r, v);
}

void Remove(const std::string& f, std::vector<std::string>* v) {
  if (!HasF(*v, f)) return;
  v->erase(std::remove(v->begin(), v->end(), f), v->end());
  for (auto& g : Features())
    for (const char* r : g.requires_)
      if (f == r) Remove(g.name, v);
}

/// Drops features whose requirements are missing (a hypervisor may hide AVX2 yet report AVX-512).
void CloseDown(std::vector<std::string>* v) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& f : std::vector<std::string>(*v))
      for (const char* r : Find(f)->requires_)
        if (!HasF(*v, r) && HasF(*v, f)) {
          Remove(f, v);
          changed = true;
        }
  }
  std::sort(v->begin(), v->end());
}

const char* HostFamily() {
#if defined(__x86_64__) || defined(__i386__)
  return "x86";
#elif defined(__aarch64__) || defined(__arm__)
  return "arm";
#else
  return "other";
#endif
}

// -mcpu names: each is a list of features before closure.
const std::map<std::string, std::vector<std::string>>& Names() {
  static const std::map<std::string, std::vector<std::string>> m = [] {
    std::map<std::string, std::vector<std::string>> n;
    std::vector<std::string> v3 = {"sse4.2", "avx", "avx2", "fma", "f16c"};
    std::vector<std::string> v4 = v3;
    for (auto f : {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}) v4.push_back(f);
    auto plus = [](std::vector<std::string> a, std::vector<std::string> b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    n["generic"] = {};
    n["x86-64"] = {};
    n["x86-64-v2"] = {"sse4.2"};
    n["x86-64-v3"] = n["haswell"] = n["znver2"] = n["znver3"] = v3;
    n["x86-64-v4"] = n["skylake-avx512"] = v4;
    n["cascadelake"] = n["icelake-server"] = plus(v4, {"avx512vnni"});
    n["cooperlake"] = n["znver4"] = plus(v4, {"avx512vnni", "avx512bf16"});
    n["sapphirerapids"] =
        plus(v4, {"avx512vnni", "avx512bf16", "avx512fp16", "amx-tile", "amx-bf16", "amx-int8"});
    n["armv8-a"] = {"neon"};
    return n;
  }();
  return m;
}

#if defined(__x86_64__) || defined(__i386__)
unsigned long long Xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

}  // namespace

std::vector<std::string> CpuHostFeatures() {
  std::vector<std::string> f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const unsigned c1 = c;
  auto bit = [](unsigned r, int i) { return ((r >> i) & 1u) != 0; };
  if (bit(c1, 20)) f.push_back("sse4.2");
  // AVX state (and AVX-512, AMX state) counts only when the OS saves it: XCR0 via xgetbv.
  const unsigned long long xcr0 = bit(c1, 27) ? Xcr0() : 0;
  const bool ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  const bool tiles = (xcr0 & 0x60000) == 0x60000;
  if (ymm && bit(c1, 28)) f.push_back("avx");
  if (ymm && bit(c1, 12)) f.push_back("fma");
  if (ymm && bit(c1, 29)) f.push_back("f16c");
  unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b7, c7, d7);
    __cpuid_count(7, 1, a71, b, c, d);
  }
  if (ymm && bit(b7, 5)) f.push_back("avx2");
  if (zmm) {
    if (bit(b7, 16)) f.push_back("avx512f");
    if (bit(b7, 17)) f.push_back("avx512dq");
    if (bit(b7, 28)) f.push_back("avx512cd");
    if (bit(b7, 30)) f.push_back("avx512bw");
    if (bit(b7, 31)) f.push_back("avx512vl");
    if (bit(c7, 11)) f.push_back("avx512vnni");
    if (bit(d7, 23)) f.push_back("avx512fp16");
    if (bit(a71, 5)) f.push_back("avx512bf16");
  }
  if (tiles && bit(d7, 24)) f.push_back("amx-tile");
  if (tiles && bit(d7, 22)) f.push_back("amx-bf16");
  if (tiles && bit(d7, 25)) f.push_back("amx-int8");
#elif defined(__aarch64__)
  f.push_back("neon");
#endif
  CloseDown(&f);
  // TL_CPU_HOST_LIMIT=<cpu name> (e.g. x86-64-v3): report at most that CPU's features, so the test suite
  // can be run as on an older host (what it selects and skips; the kernels it builds still run here).
  if (const char* lim = std::getenv("TL_CPU_HOST_LIMIT"); lim && *lim) {
    std::vector<std::string> cap;
    if (!CpuFeaturesOfName(lim, &cap) || std::string(lim) == "native" || std::string(lim) == "host")
      throw UserError(ErrorKind::kArgument, std::string("TL_CPU_HOST_LIMIT='") + lim +
                                                "' is not a CPU name; known: " + CpuKnownNames());
    std::vector<std::string> kept;
    for (auto& x : f)
      if (std::find(cap.begin(), cap.end(), x) != cap.end()) kept.push_back(x);
    f = kept;
  }
  return f;
}

const std::vector<std::string>& CpuKnownFeatures() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> n;
    for (auto& f : Features()) n.push_back(f.name);
    std::sort(n.begin(), n.end());
    return n;
  }();
  return v;
}

bool CpuFeaturesOfName(const std::string& name, std::vector<std::string>* out) {
  if (name == "native" || name == "host") {
    *out = CpuHostFeatures();
    return true;
  }
  auto it = Names().find(name);
  if (it == Names().end()) return false;
  out->clear();
  for (auto& f : it->second) Add(f, out);
  std::sort(out->begin(), out->end());
  return true;
}

std::string CpuKnownNames() {
  std::string s = "native";
  for (auto& kv : Names()) s += ", " + kv.first;
  return s;
}

std::string CpuApplyAttr(const std::string& attr, std::vector<std::string>* features) {
  if (attr.empty()) return "empty -mattr item";
  const bool minus = attr[0] == '-';
  const std::string name = attr.substr(attr[0] == '+' || attr[0] == '-' ? 1 : 0);
  const FeatureInfo* f = Find(name);
  if (!f) {
    std::string known;
    for (auto& k : CpuKnownFeatures()) known += (known.empty() ? "" : ", ") + k;
    return "unknown CPU feature '" + name + "' in -mattr (known: " + known + ")";
  }
  if (!minus && std::string(f->family) != HostFamily())
    return "CPU feature '" + name + "' is for " + f->family +
           " processors; the host compiler here builds for " + HostFamily();
  if (minus)
    Remove(name, features);
  else
    Add(name, features);
  std::sort(features->begin(), features->end());
  return "";
}

const char* CpuHostFamily() { return HostFamily(); }

std::string CpuForeignFamily(const Target& t) {
  for (auto& name : t.features) {
    const FeatureInfo* f = Find(name);
    if (f && std::string(f->family) != HostFamily()) return f->family;
  }
  return "";
}

CpuIsa ChooseCpuIsa(const Target& t) {
  CpuIsa isa;
  const bool x86 = std::string(HostFamily()) == "x86";
  if (t.Has("avx512f")) {
    isa = {3, "avx512", "12x32 fp32 zmm", ""};
  } else if (t.Has("avx2") && t.Has("fma")) {
    isa = {2, "avx2", "6x16 fp32 ymm", ""};
  } else {
    isa = {1, "portable", "6x16 fp32 (GCC vector extensions, two 8-column passes)", ""};
  }
  if (x86) {
    // Exactly the target's features: a forced lower ISA must not let the compiler vectorise the
    // rest of the kernel with instructions the target lacks (-march=native would).
    isa.arch_flags = "-march=x86-64";
    for (auto& f : t.features) {
      const FeatureInfo* info = Find(f);
      if (!info || std::string(info->family) == "x86") isa.arch_flags += " -m" + f;
    }
    if (!t.arch_given || t.arch == "native" || t.arch == "host") isa.arch_flags += " -mtune=native";
  } else if (std::string(HostFamily()) == "arm") {
    if (!t.arch_given || t.arch == "native" || t.arch == "host") isa.arch_flags = "-mcpu=native";
  }
  return isa;
}

std::string CpuAttrDiff(const Target& t) {
  std::vector<std::string> base;
  if (!t.arch_given || !CpuFeaturesOfName(t.arch, &base)) base = CpuHostFeatures();
  std::vector<std::string> items;
  for (auto& f : t.features)
    if (!HasF(base, f)) items.push_back("+" + f);
  for (auto& f : base)
    if (!HasF(t.features, f)) items.push_back("-" + f);
  if (items.empty()) return "";
  std::string s = " -mattr=";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + items[i];
  return s;
}

}  // namespace tl
