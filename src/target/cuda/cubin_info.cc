// ELF64 section walk over a cubin; see cubin_info.h. Every read is bounds-checked: a damaged
// image yields fewer (or no) entries, never a crash.
#include "target/cuda/cubin_info.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>

namespace tl::cuda {
namespace {

constexpr uint8_t kEifmtSval = 4;  // attribute record with a 16-bit size and a payload
constexpr uint8_t kEiattrFrameSize = 0x11;
constexpr uint8_t kEiattrRegcount = 0x2f;

struct Section {
  std::string name;
  uint64_t offset = 0, size = 0;
  uint32_t info = 0;
};

template <typename T>
bool Read(const std::string& img, uint64_t at, T* out) {
  if (at > img.size() || img.size() - at < sizeof(T)) return false;
  std::memcpy(out, img.data() + at, sizeof(T));  // ELF of a cubin is little-endian, as is the host
  return true;
}

std::vector<Section> Sections(const std::string& img) {
  std::vector<Section> out;
  if (img.size() < 64 ||
      img.compare(0, 4,
                  "\x7f"
                  "ELF") != 0 ||
      img[4] != 2 /*ELFCLASS64*/)
    return out;
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!Read(img, 0x28, &shoff) || !Read(img, 0x3a, &shentsize) || !Read(img, 0x3c, &shnum) ||
      !Read(img, 0x3e, &shstrndx) || shentsize < 64 || shstrndx >= shnum)
    return out;
  std::vector<uint32_t> name_at(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t h = shoff + uint64_t(i) * shentsize;
    Section s;
    if (!Read(img, h, &name_at[i]) || !Read(img, h + 0x18, &s.offset) || !Read(img, h + 0x20, &s.size) ||
        !Read(img, h + 0x2c, &s.info))
      return {};
    out.push_back(s);
  }
  const Section& strtab = out[shstrndx];
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t at = strtab.offset + name_at[i];
    if (name_at[i] >= strtab.size || at >= img.size()) continue;
    out[i].name = std::string(img.c_str() + at, strnlen(img.c_str() + at, img.size() - at));
  }
  return out;
}

}  // namespace

std::vector<KernelResources> ResourcesFromCubin(const std::string& img) {
  std::vector<Section> sections = Sections(img);
  // Symbol-indexed attributes of the global .nv.info section.
  std::map<uint32_t, int> regcount, frame;
  for (const Section& s : sections) {
    if (s.name != ".nv.info") continue;
    uint64_t at = s.offset, end = std::min<uint64_t>(s.offset + s.size, img.size());
    while (at + 4 <= end) {
      uint8_t fmt = static_cast<uint8_t>(img[at]), attr = static_cast<uint8_t>(img[at + 1]);
      uint16_t size = 0;
      Read(img, at + 2, &size);
      if (fmt != kEifmtSval) {  // the other formats carry at most 2 bytes, inside the record
        at += 4;
        continue;
      }
      uint32_t sym = 0, value = 0;
      if (size == 8 && Read(img, at + 4, &sym) && Read(img, at + 8, &value)) {
        if (attr == kEiattrRegcount) regcount[sym] = static_cast<int>(value);
        if (attr == kEiattrFrameSize) frame[sym] = static_cast<int>(value);
      }
      at += 4 + size;
    }
  }
  auto find = [&](const std::string& name) -> const Section* {
    for (const Section& s : sections)
      if (s.name == name) return &s;
    return nullptr;
  };
  std::vector<KernelResources> out;
  for (const Section& s : sections) {
    if (s.name.rfind(".text.", 0) != 0) continue;
    std::string fn = s.name.substr(6);
    if (!find(".nv.info." + fn)) continue;  // a device function, not a kernel
    KernelResources k;
    k.name = fn;
    uint32_t sym = s.info & 0xffffff;
    auto r = regcount.find(sym);
    // Older images also keep the count in the top byte of sh_info; newer ones only in .nv.info.
    k.registers = r != regcount.end() ? r->second : (s.info >> 24 ? static_cast<int>(s.info >> 24) : -1);
    auto f = frame.find(sym);
    k.stack_bytes = f != frame.end() ? f->second : -1;
    const Section* shared = find(".nv.shared." + fn);
    k.shared_bytes = shared ? static_cast<int>(shared->size) : 0;
    out.push_back(k);
  }
  return out;
}

}  // namespace tl::cuda
