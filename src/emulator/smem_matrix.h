// Internal to the emulator: a matrix operand in shared memory as the PTX ISA's canonical layouts describe it
// (wgmma's "Matrix Descriptor Format" and tcgen05's "Shared Memory Descriptor" share them): the fields the
// descriptors carry, the byte address of an element, and the swizzle of that address.
#pragma once
#include <cstdint>

namespace tl::emu {

struct SmemMatrixDesc {
  int64_t start = 0, lbo = 0, sbo = 0, base_offset = 0, swizzle_bytes = 0;
};

// The fields of a 64-bit matrix descriptor (PTX ISA, wgmma's "Matrix Descriptor Format"): start address,
// leading and stride byte offsets (each in 16-byte units, 14 bits at bits 0, 16, 32), base offset (3 bits at
// 49), swizzle mode (2 bits at 62: none, 128B, 64B, 32B).
inline SmemMatrixDesc DecodeMatrixDescriptor(uint64_t d) {
  SmemMatrixDesc r;
  r.start = static_cast<int64_t>(d & 0x3FFF) << 4;
  r.lbo = static_cast<int64_t>((d >> 16) & 0x3FFF) << 4;
  r.sbo = static_cast<int64_t>((d >> 32) & 0x3FFF) << 4;
  r.base_offset = static_cast<int64_t>((d >> 49) & 7);
  static const int64_t bytes[4] = {0, 128, 64, 32};
  r.swizzle_bytes = bytes[(d >> 62) & 3];
  return r;
}

// Byte address of element (mn, k) of an operand in a canonical layout, before the swizzle. With
// T elements per 16 bytes and S the swizzle width (S / 16 = 2, 4, 8 chunks per row):
//   K-major  ((8, m), (T, 2k)) : ((S/2 elements, SBO), (1, T))   rows of S bytes, 8-row groups at SBO
//   MN-major ((T, S/16, m), (8, k)) : ((1, T, LBO), (S/2 elements, SBO))
inline int64_t CanonicalAddress(const SmemMatrixDesc& d, bool mn_major, int64_t mn, int64_t k, int eb) {
  const int64_t S = d.swizzle_bytes;
  if (!mn_major) return d.start + (mn / 8) * d.sbo + (mn % 8) * S + k * eb;
  const int64_t W = S / eb;  // elements along MN in one swizzle row
  return d.start + (mn / W) * d.lbo + (mn % W) * eb + (k % 8) * S + (k / 8) * d.sbo;
}

// The swizzle: 16-byte chunk bits [4, 4+b) xor address bits [7, 7+b), b = log2(S / 16).
inline int64_t SwizzleAddress(int64_t a, int64_t S) {
  const int64_t b = S == 128 ? 3 : S == 64 ? 2 : 1;
  return a ^ (((a >> 7) & ((int64_t{1} << b) - 1)) << 4);
}

}  // namespace tl::emu
