// Internal to the emulator: a matrix operand in shared memory as the PTX ISA's canonical layouts describe it
// (wgmma's "Matrix Descriptor Format" and tcgen05's "Shared Memory Descriptor" share them): the fields the
// descriptors carry, the byte address of an element, and the swizzle of that address.
#pragma once
#include <cstdint>
#include <string>

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

// Sub-byte operands of kind::f8f6f4 / kind::mxf8f6f4 in shared memory are laid out as 8-bit ones whose
// 16-byte groups each hold 16 values of K packed in their first bytes (the TMA formats that fill them, e.g.
// CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: 16 fp4 values in 8 bytes, then 8 unused): value k of an E2M1 operand
// is nibble k % 2 (low first) of the byte at K offset 16 (k / 16) + (k % 16) / 2.
inline int64_t PaddedFp4Column(int64_t k) { return 16 * (k / 16) + (k % 16) / 2; }
// fp6 (E2M3 / E3M2; 16U6_ALIGN16B: 16 values in 12 bytes, then 4 unused): value k is bits [b, b + 6) of the
// 12-byte little-endian stream of its group, b = 6 (k % 16), starting at byte PaddedFp6Column(k) (and
// reaching into the next one when PaddedFp6Shift(k) > 2). The bit order within the 12 bytes (the first value
// lowest) is this project's reading: no document here lays it out.
inline int64_t PaddedFp6Column(int64_t k) { return 16 * (k / 16) + 6 * (k % 16) / 8; }
inline int PaddedFp6Shift(int64_t k) { return static_cast<int>(6 * (k % 16) % 8); }

// The swizzle: 16-byte chunk bits [4, 4+b) xor address bits [7, 7+b), b = log2(S / 16).
inline int64_t SwizzleAddress(int64_t a, int64_t S) {
  const int64_t b = S == 128 ? 3 : S == 64 ? 2 : 1;
  return a ^ (((a >> 7) & ((int64_t{1} << b) - 1)) << 4);
}

// The tcgen05 shared memory descriptor (PTX ISA, tcgen05 "Shared Memory Descriptor"): start address, leading
// and stride byte offsets in 16-byte units at bits 0-13, 16-29, 32-45; the fixed 0b001 at 46-48; the matrix
// base offset at 49-51; the leading-dimension mode at 52; the swizzle at 61-63. False (with why) for what the
// emulators do not model.
inline bool DecodeTcgen05Descriptor(uint64_t d, SmemMatrixDesc* r, std::string* why) {
  r->start = static_cast<int64_t>(d & 0x3FFF) << 4;
  r->lbo = static_cast<int64_t>((d >> 16) & 0x3FFF) << 4;
  r->sbo = static_cast<int64_t>((d >> 32) & 0x3FFF) << 4;
  if (((d >> 46) & 7) != 1) return *why = "bits 46-48 are not the fixed value 0b001", false;
  if ((d >> 49) & 7) return *why = "a non-zero matrix base offset is not emulated", false;
  if ((d >> 52) & 1) return *why = "the absolute leading-dimension address mode is not emulated", false;
  switch ((d >> 61) & 7) {
    case 2: r->swizzle_bytes = 128; break;
    case 4: r->swizzle_bytes = 64; break;
    case 6: r->swizzle_bytes = 32; break;
    case 0: return *why = "the no-swizzle (interleaved) layout is not emulated", false;
    case 1: return *why = "the 128-byte swizzle with 32-byte atoms is not emulated", false;
    default: return *why = "swizzle mode " + std::to_string((d >> 61) & 7) + " is invalid", false;
  }
  return true;
}

// The tcgen05.mma instruction descriptor (PTX ISA, tcgen05 "Instruction Descriptor") of the kinds the
// emulators run: dense (bit 2 clear), D type at 4-5 (0: F16, 1: F32, 2: S32), A / B types at 7-9 / 10-12
// (kind::f16 0: F16, 1: BF16; kind::f8f6f4 0: E4M3, 1: E5M2, 5: E2M1; kind::i8 0: unsigned, 1: signed),
// negate A / B at 13 / 14, transpose (MN-major) A / B at 15 / 16, N >> 3 at 17-22, M >> 4 at 24-28. kind: 0
// f16, 1 f8f6f4, 2 i8. kind 3: kind::mxf8f6f4.block_scale (the block-scaled layout: no D type; B's scale byte
// id at 4-5, the scale type at 23 (1: UE8M0, the only one of kind::mxf8f6f4), A's scale byte id at 29-30).
// kind 4: kind::mxf4nvf4 (NVFP4): the same layout, E2M1 = 1, UE4M3 scales (bit 23 clear). kind 5: kind::mxf4
// (MXFP4, scale_vec::2X): E2M1 = 1, UE8M0 scales (bit 23 set), scale ids 0 or 2 (the half-word offset).
// kind 6: kind::tf32: the kind::f16 layout with TF32 = 2 A and B and an F32 D.
struct Tcgen05Instr {
  int64_t M = 0, N = 0;
  int a_type = 0, b_type = 0;
  bool neg_a = false, neg_b = false, mn_a = false, mn_b = false;
  int a_sf_id = 0, b_sf_id = 0;
  bool d_f16 = false;  // D holds float16 values, one a 32-bit column (bits 0-15)
};
// The tensor-memory lane of row m of an M-row D (PTX ISA, tcgen05 "Data path layout organization"): M = 128
// (and each block's 128 of a pair) row m at lane m; M = 64 of cta_group::1 (layout F) rows 16 q .. 16 q + 15
// in lanes 32 q .. 32 q + 15, the first half of each warp's quarter.
inline int64_t Tcgen05RowLane(int64_t M, int64_t m) { return M == 64 ? 32 * (m / 16) + m % 16 : m; }
// cta_group: 1, or 2 (a CTA pair: M = 256, 128 rows a block)
inline bool DecodeTcgen05Instr(uint32_t idesc, int kind, Tcgen05Instr* r, std::string* why,
                               int cta_group = 1) {
  // kind 4: kind::mxf4nvf4.block_scale.block16 (NVFP4): the block-scaled layout with E2M1 = 1 for A and B and
  // UE4M3 scales (bit 23 clear), K = 64 (bit 31 clear)
  const bool tf32 = kind == 6, i8 = kind == 2, f8 = kind != 0 && !tf32, mxf4 = kind == 5,
             nvf4 = kind == 4 || mxf4, bs = kind == 3 || nvf4;
  r->N = static_cast<int64_t>((idesc >> 17) & 0x3F) << 3;
  r->M = static_cast<int64_t>((idesc >> 24) & 0x1F) << 4;
  r->a_type = (idesc >> 7) & 7;
  r->b_type = (idesc >> 10) & 7;
  r->neg_a = (idesc >> 13) & 1;
  r->neg_b = (idesc >> 14) & 1;
  r->mn_a = (idesc >> 15) & 1;
  r->mn_b = (idesc >> 16) & 1;
  if (idesc & 4) return *why = "sparse operands are not emulated", false;
  if (bs) {
    r->b_sf_id = (idesc >> 4) & 3;
    r->a_sf_id = (idesc >> 29) & 3;
    if (mxf4) {
      if (!((idesc >> 23) & 1)) return *why = "kind::mxf4 scales are UE8M0 (bit 23 set)", false;
      if (idesc >> 31) return *why = "K = 96 (bit 31) is not emulated", false;
      if (r->a_type != 1 || r->b_type != 1) return *why = "kind::mxf4 takes E2M1 (1) A and B", false;
      if ((r->a_sf_id | r->b_sf_id) & 1)
        return *why = "the scale ids must be 0 or 2 with .scale_vec::2X (a half-word offset)", false;
      if (r->mn_a || r->mn_b) return *why = "kind::mxf4 takes K-major A and B only", false;
    } else if (nvf4) {
      if ((idesc >> 23) & 1)
        return *why = "UE8M0 scales with kind::mxf4nvf4 (scale_vec::2X) are not emulated", false;
      if (idesc >> 31) return *why = "K = 96 (bit 31) is not emulated", false;
      if (r->a_type != 1 || r->b_type != 1) return *why = "kind::mxf4nvf4 takes E2M1 (1) A and B", false;
      if (r->a_sf_id || r->b_sf_id)
        return *why = "the scale ids must be 0 with .block16 (scale_vec::4X)", false;
    } else {
      if (!((idesc >> 23) & 1)) return *why = "kind::mxf8f6f4 scales are UE8M0 (bit 23 set)", false;
      if (idesc >> 31) return *why = "bit 31 must be clear for kind::mxf8f6f4", false;
    }
  } else if (i8 ? ((idesc >> 4) & 3) != 2u : tf32 ? ((idesc >> 4) & 3) != 1u : ((idesc >> 4) & 3) > 1u) {
    return *why = i8     ? "kind::i8 accumulates into S32 (D type 2)"
                  : tf32 ? "kind::tf32 accumulates into F32 (D type 1)"
                         : "the accumulator is F16 (D type 0) or F32 (D type 1)",
           false;
  } else {
    r->d_f16 = !i8 && ((idesc >> 4) & 3) == 0;
  }
  if (tf32 && (r->a_type != 2 || r->b_type != 2)) return *why = "kind::tf32 takes TF32 (2) A and B", false;
  if (!f8 && !tf32 && (r->a_type > 1 || r->b_type > 1 || r->a_type != r->b_type))
    return *why = "A and B must both be F16 (0) or both BF16 (1)", false;
  auto f8f6f4 = [&](int t) { return t <= 1 || (!i8 && t >= 3 && t <= 5); };  // E4M3, E5M2, E2M3, E3M2, E2M1
  if (f8 && !nvf4 && (!f8f6f4(r->a_type) || !f8f6f4(r->b_type)))
    return *why = i8 ? "A and B must be unsigned (0) or signed (1) 8-bit integers"
                     : "A and B must be E4M3 (0), E5M2 (1), E2M3 (3), E3M2 (4) or E2M1 (5)",
           false;
  if (r->M != 128 * cta_group && !(cta_group == 1 && r->M == 64))
    return *why = "M = " + std::to_string(r->M) + ": only M = " +
                  (cta_group == 1 ? std::string("64 and 128") : std::to_string(128 * cta_group)) +
                  " (cta_group::" + std::to_string(cta_group) + ") are emulated",
           false;
  if (bs && r->M != 128 * cta_group)
    return *why = "M = " + std::to_string(r->M) + ": the block-scaled MMA is emulated with M = " +
                  std::to_string(128 * cta_group) + " only",
           false;
  if (r->N < 8 || r->N > 256 || r->N % 8)
    return *why = "N = " + std::to_string(r->N) + " is not in {8, 16, ..., 256}", false;
  return true;
}

}  // namespace tl::emu
