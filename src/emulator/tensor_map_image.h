// Internal to the emulators: the 128-byte tensor-map image the host encodes for a TMA copy and the copy
// instruction decodes (the thread-level emulator's tl.tensor_map, and the kernel parameter the PTX emulator
// passes where a GPU launch passes the driver's CUtensorMap, whose layout is private to the driver). Layout
// (little endian):
//   [0, 8)    global address            [8, 12)   rank r (1..5)        [12, 16)  element bytes
//   [16, 36)  dims, innermost first     [36, 40)  swizzle bytes (0, 32, 64, 128)
//   [40, 72)  byte strides of dims 1..r-1 (dim 0 is contiguous)
//   [72, 92)  box extents, innermost first          [92, 96) out-of-bounds fill (0: zeros)
//   [96, 100) the magic "TLTM"          [100, 101) element type code (ir/dtype.h DataType::Code + 1, 0: not
//   given)                              [101, 103) element bits      [103, 104) format (0: the elements;
//   1: 16U4_ALIGN16B, fp4 values two a byte; 2: 16U6_ALIGN16B, fp6 values four in 3 bytes: dims[0] and the
//   box count values, the strides bytes) [104, 128) zero
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tl::emu {

constexpr uint32_t kTensorMapMagic = 0x4D544C54;  // "TLTM"

struct MapImage {
  uint8_t b[128];
};

template <typename T>
T MapGet(const MapImage& m, int off) {
  T v;
  std::memcpy(&v, m.b + off, sizeof(T));
  return v;
}
template <typename T>
void MapPut(MapImage* m, int off, T v) {
  std::memcpy(m->b + off, &v, sizeof(T));
}

/// The host side: a tiled tensor map of a row-major contiguous tensor (shape and box outermost first).
inline MapImage EncodeTensorMap(const uint8_t* base, const std::vector<int64_t>& shape, int eb,
                                const std::vector<int64_t>& box, int swizzle,
                                DataType dtype = DataType::Void(), int format = 0) {
  MapImage m;
  std::memset(m.b, 0, sizeof(m.b));
  const int r = static_cast<int>(shape.size());
  MapPut<uint64_t>(&m, 0, reinterpret_cast<uintptr_t>(base));
  MapPut<uint32_t>(&m, 8, static_cast<uint32_t>(r));
  MapPut<uint32_t>(&m, 12, static_cast<uint32_t>(eb));
  int64_t stride = eb;
  for (int i = 0; i < r; ++i) {  // i: innermost first
    const int64_t d = shape[static_cast<size_t>(r - 1 - i)];
    MapPut<uint32_t>(&m, 16 + 4 * i, static_cast<uint32_t>(d));
    if (i > 0) MapPut<uint64_t>(&m, 40 + 8 * (i - 1), static_cast<uint64_t>(stride));
    stride *= i == 0 && format == 1 ? d / 2 : i == 0 && format == 2 ? d * 3 / 4 : d;
    MapPut<uint32_t>(&m, 72 + 4 * i, static_cast<uint32_t>(box[static_cast<size_t>(r - 1 - i)]));
  }
  MapPut<uint32_t>(&m, 36, static_cast<uint32_t>(swizzle));
  MapPut<uint32_t>(&m, 92, 0);
  MapPut<uint32_t>(&m, 96, kTensorMapMagic);
  MapPut<uint8_t>(&m, 103, static_cast<uint8_t>(format));
  if (dtype.code() != DataType::Code::kVoid) {  // the element type, as a CUtensorMap's data type (reductions)
    MapPut<uint8_t>(&m, 100, static_cast<uint8_t>(static_cast<int>(dtype.code()) + 1));
    MapPut<uint16_t>(&m, 101, static_cast<uint16_t>(dtype.bits()));
  }
  return m;
}

/// A map as the copy instruction reads it from the image (dims, strides, box: innermost first).
struct DecodedTensorMap {
  int r = 0, eb = 0, sw = 0, format = 0;
  uint8_t* base = nullptr;
  int64_t dims[5] = {}, strides[5] = {}, bx[5] = {}, count = 0;
  DataType dtype = DataType::Void();  // when the image gives it
};

/// false when the image is not one (no magic, a bad rank).
inline bool DecodeTensorMap(const MapImage& img, DecodedTensorMap* d) {
  if (MapGet<uint32_t>(img, 96) != kTensorMapMagic) return false;
  d->r = static_cast<int>(MapGet<uint32_t>(img, 8));
  if (d->r < 1 || d->r > 5) return false;
  d->eb = static_cast<int>(MapGet<uint32_t>(img, 12));
  d->sw = static_cast<int>(MapGet<uint32_t>(img, 36));
  d->format = MapGet<uint8_t>(img, 103);
  d->base = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(MapGet<uint64_t>(img, 0)));
  if (const uint8_t code = MapGet<uint8_t>(img, 100))
    d->dtype = DataType(static_cast<DataType::Code>(code - 1), MapGet<uint16_t>(img, 101));
  d->count = 1;
  for (int i = 0; i < d->r; ++i) {
    d->dims[i] = MapGet<uint32_t>(img, 16 + 4 * i);
    d->strides[i] = i == 0 ? d->eb : static_cast<int64_t>(MapGet<uint64_t>(img, 40 + 8 * (i - 1)));
    d->bx[i] = MapGet<uint32_t>(img, 72 + 4 * i);
    d->count *= d->bx[i];
  }
  return true;
}

/// The driver's rules for a map of a packed format (16U4_ALIGN16B / 16U6_ALIGN16B; cuTensorMapEncodeTiled):
/// "" when met or the image has no such format, else "(format ...) cannot be encoded: <the rule>".
inline std::string PackedMapProblem(const MapImage& img) {
  DecodedTensorMap d;
  if (!DecodeTensorMap(img, &d) || !d.format) return "";
  std::string why;
  if (reinterpret_cast<uintptr_t>(d.base) % 32)
    why = "the tensor's address is not 32-byte aligned";
  else if (d.dims[0] % 128)
    why = "its rows are " + std::to_string(d.dims[0]) + " values, not a multiple of 128";
  else if (d.bx[0] != 128)
    why = "the box is " + std::to_string(d.bx[0]) + " values wide, not 128";
  for (int i = 1; i < d.r && why.empty(); ++i)
    if (d.strides[i] % 32)
      why = "a stride is " + std::to_string(d.strides[i]) + " bytes, not a multiple of 32";
  if (why.empty()) return "";
  return std::string("(format ") + (d.format == 1 ? "16U4_ALIGN16B" : "16U6_ALIGN16B") +
         ") cannot be encoded: " + why + " (cuTensorMapEncodeTiled refuses it on a GPU)";
}

/// Where slot x (a value index of the box's row, from the map's innermost coordinate) of a copy with a packed
/// format reads its byte: the 16 values of group x / 16 are packed in its 8 (format 1, 16U4_ALIGN16B: two a
/// byte, the first in the low nibble) or 12 bytes (format 2, 16U6_ALIGN16B), byte x % 16 of those at byte 8
/// (x / 16) + x % 16 (12 (x / 16) + x % 16) of the row; -1 for the gap (x % 16 >= 8 / 12), which the copy
/// does not write. The group is in bounds when its first value is (dims[0] is a multiple of 128).
inline int64_t PackedSlotByte(int format, int64_t x) {
  const int64_t n = format == 1 ? 8 : 12;
  return x % 16 < n ? n * (x / 16) + x % 16 : -1;
}

}  // namespace tl::emu
