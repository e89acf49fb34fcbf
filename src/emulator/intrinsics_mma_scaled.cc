// The warp-level block-scaled MMA of sm_120a / sm_121a in the emulator (tl.mma_sync_blockscaled), written
// from NVIDIA's PTX ISA ("Matrix Fragments for mma.m16n8k64", "Block Scaling for mma.sync"), not from the
// compiler's layout code: mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X
// .f32.e2m1.e2m1.f32.ue4m3.
#include "emulator/executor.h"
#include "emulator/intrinsic_args.h"
#include "emulator/numeric.h"

namespace tl::emu {

namespace {
double DecodeUE4M3(uint32_t byte) {
  // unsigned E4M3 (4 exponent bits, bias 7; 3 mantissa bits; 0x7F is NaN): bit 7 is not part of the value
  return DecodeMinifloat(byte & 0x7F, 4, 3, true);
}
}  // namespace

void Executor::MmaSyncBlockScaled(const CallNode* c, const Lanes& act) {
  // (shape, kind, &A, &B, &C, scale-a word, scale-b word, thread-id-a, thread-id-b); byte-id is 0 (4X).
  // g = lane / 4, t = lane % 4. A lane's operands are its registers' values in order (value 8 r + e is nibble
  // e of register r):
  //   A (16 x 64) a_{8r+e}: row g + 8 (r % 2), col 8 t + e + 32 (r / 2)
  //   B (64 x 8)  b_{8r+e}: row 8 t + e + 32 r, col g
  //   C, D c_i:             row g + 8 (i / 2), col 2 t + i % 2
  // scale_A (16 x 4): row m's four UE4M3 scales (byte j: k in [16 j, 16 j + 16)) are the word of lane
  // 4 (m % 8) + 2 thread-id-a + m / 8; scale_B (4 x 8): column n's are the word of lane 4 n + thread-id-b.
  // D = C + sum_k (A[m][k] sa[m][k / 16]) (B[k][n] sb[n][k / 16]): every product is exact in double; the 64
  // scaled products and C are summed in double and rounded once to float32 (the hardware's internal order and
  // precision are unspecified).
  // kind "nvf4": A and B are a lane's values one a byte (float4_e2m1fn, 32 and 16); "nvf4_packed": its
  // registers (uint32, 4 and 2), eight e2m1 codes each, the first in bits 0-3.
  const bool packed = StrArg(c, 1) == "nvf4_packed";
  if (StrArg(c, 0) != "m16n8k64" || (StrArg(c, 1) != "nvf4" && !packed))
    Bad(c,
        "the block-scaled mma.sync is emulated for m16n8k64 nvf4 / nvf4_packed (kind::mxf4nvf4 "
        "scale_vec::4X, ue4m3)");
  const int64_t tid_a = ConstArg(c, 7), tid_b = ConstArg(c, 8);
  if (tid_a < 0 || tid_a > 1 || tid_b < 0 || tid_b > 3)
    Bad(c, "thread-id-a must be 0 or 1, thread-id-b 0 to 3");
  const BufferLoadNode* ops[3] = {Operand(c, 2), Operand(c, 3), Operand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) Bad(c, "operands must be local buffers");
  }
  auto operand_ok = [&](DataType t) {
    return packed ? t == DataType::UInt(32) : t.code() == DataType::Code::kFloat4E2M1;
  };
  if (!operand_ok(m[0]->t) || !operand_ok(m[1]->t))
    Bad(c, packed ? "A and B must be uint32 registers" : "A and B must be float4_e2m1fn");
  if (m[2]->t != DataType::Float(32)) Bad(c, "C must be float32");
  Lanes full = FullWarps(act, "mma_sync (block_scale)");
  if (full.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  const int count[3] = {packed ? 4 : 32, packed ? 2 : 16, 4};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, full, f[i], count[i]);
  }
  Slot* sw[2] = {Tmp(), Tmp()};
  Eval(c->args[5], full, sw[0]);
  Eval(c->args[6], full, sw[1]);
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    double A[16][64] = {}, B[64][8] = {}, D[16][8] = {}, sa[16][4] = {}, sb[8][4] = {};
    bool lane_ok[32];
    for (int l = 0; l < 32; ++l) {
      const int t = base + l, g = l >> 2, tg = l & 3;
      lane_ok[l] = f[0][t].i >= 0 && f[1][t].i >= 0 && f[2][t].i >= 0;
      if (!lane_ok[l]) continue;
      // value e of register r of operand x
      auto value = [&](int x, int r, int e) {
        if (!packed) return Read(*m[x], t, f[x][t].i + 8 * r + e).f;
        const uint64_t reg = static_cast<uint64_t>(Read(*m[x], t, f[x][t].i + r).i);
        return DecodeE2M1(static_cast<uint32_t>(reg >> (4 * e)) & 0xF);
      };
      for (int r = 0; r < 4; ++r)
        for (int e = 0; e < 8; ++e) A[g + 8 * (r % 2)][8 * tg + e + 32 * (r / 2)] = value(0, r, e);
      for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 8; ++e) B[8 * tg + e + 32 * r][g] = value(1, r, e);
      for (int i = 0; i < 4; ++i) D[g + 8 * (i / 2)][2 * tg + i % 2] = Read(*m[2], t, f[2][t].i + i).f;
    }
    for (int row = 0; row < 16; ++row) {
      const uint64_t word = static_cast<uint64_t>(sw[0][base + 4 * (row % 8) + 2 * tid_a + row / 8].i);
      for (int j = 0; j < 4; ++j) sa[row][j] = DecodeUE4M3(static_cast<uint32_t>(word >> (8 * j)) & 0xFF);
    }
    for (int col = 0; col < 8; ++col) {
      const uint64_t word = static_cast<uint64_t>(sw[1][base + 4 * col + tid_b].i);
      for (int j = 0; j < 4; ++j) sb[col][j] = DecodeUE4M3(static_cast<uint32_t>(word >> (8 * j)) & 0xFF);
    }
    for (int k = 0; k < 64; ++k)
      for (int row = 0; row < 16; ++row)
        for (int col = 0; col < 8; ++col)
          D[row][col] += (A[row][k] * sa[row][k / 16]) * (B[k][col] * sb[col][k / 16]);
    for (int l = 0; l < 32; ++l) {
      if (!lane_ok[l]) continue;
      const int t = base + l, g = l >> 2, tg = l & 3;
      for (int i = 0; i < 4; ++i) {
        Slot v;
        v.f = RoundFloat(D[g + 8 * (i / 2)][2 * tg + i % 2], DataType::Float(32));
        Write(*m[2], t, f[2][t].i + i, v);
      }
    }
  }
}

}  // namespace tl::emu
