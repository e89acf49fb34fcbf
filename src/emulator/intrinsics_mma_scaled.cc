// The warp-level block-scaled MMAs of sm_120a / sm_121a in the emulator (tl.mma_sync_blockscaled), written
// from NVIDIA's PTX ISA (9.7.14.3 "Block Scaling", "Matrix Fragments for mma.m16n8k32 / mma.m16n8k64"), not
// from the compiler's layout code: mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X
// (.ue4m3) and kind::mxf4.block_scale.scale_vec::2X (.ue8m0), both .f32.e2m1.e2m1.f32; and
// m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.<a>.<b>.f32.ue8m0, a and b any of e4m3,
// e5m2, e3m2, e2m3, e2m1. (The operands here are typed values, one an element; the registers' byte containers
// are the CUDA header's business and the PTX emulator's.)
#include <cmath>
#include <map>

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
  // (shape, kind, &A, &B, &C, scale-a word, scale-b word, thread-id-a, thread-id-b); byte-id is 0.
  //   m16n8k64 "nvf4" / "nvf4_packed": kind::mxf4nvf4 scale_vec::4X, e2m1 with ue4m3 scales;
  //   m16n8k64 "mxf4" / "mxf4_packed": kind::mxf4 scale_vec::2X, e2m1 with ue8m0 scales;
  //   m16n8k32 "mxf8f6f4_<a>_<b>" (a, b: e4m3 / e5m2 / e3m2 / e2m3 / e2m1): kind::mxf8f6f4 scale_vec::1X with
  //   ue8m0 scales.
  // g = lane / 4, t = lane % 4; a register holds P values (8 e2m1, the first in bits 0-3; 4 fp8, the first in
  // bits 0-7) and a lane's operands are its registers' values in order (value P r + e is value e of register
  // r; "*_packed": the registers' bytes, uint8, 4 a register, the first value in the low nibble of the
  // first), with KS = 64 (m16n8k64) or 32 (m16n8k32):
  //   A (16 x KS) a_{Pr+e}: row g + 8 (r % 2), col P t + e + (KS / 2) (r / 2)
  //   B (KS x 8)  b_{Pr+e}: row P t + e + (KS / 2) r, col g
  //   C, D c_i:            row g + 8 (i / 2), col 2 t + i % 2
  // Scales: row m of scale_A is the word of lane 4 (m % 8) + 2 thread-id-a + m / 8, column n of scale_B that
  // of lane 4 n + thread-id-b. 4X: byte j scales k in [16 j, 16 j + 16) (UE4M3); 2X: byte j scales k in
  // [32 j, 32 j + 32) (E8M0, 2^(e - 127), 255 NaN; byte-id 0 names bytes 0 and 1); 1X: byte 0 scales all 32
  // k. D = C + sum_k (A[m][k] sa) (B[k][n] sb): every product is exact in double; the scaled products and C
  // are summed in double and rounded once to float32 (the hardware's internal order and precision are
  // unspecified).
  const std::string& kind = StrArg(c, 1);
  const bool packed = kind == "nvf4_packed" || kind == "mxf4_packed";
  const bool x4 = kind == "nvf4" || kind == "nvf4_packed", x2 = kind == "mxf4" || kind == "mxf4_packed";
  const bool k64 = x4 || x2;
  auto f8f6f4 = [](const std::string& n, DataType* t) {
    static const std::map<std::string, const char*> names = {{"e4m3", "float8_e4m3fn"},
                                                             {"e5m2", "float8_e5m2"},
                                                             {"e3m2", "float6_e3m2fn"},
                                                             {"e2m3", "float6_e2m3fn"},
                                                             {"e2m1", "float4_e2m1fn"}};
    auto it = names.find(n);
    return it != names.end() && DataType::Parse(it->second, t);
  };
  DataType f8[2];
  const bool mxf8 = kind.size() == 18 && kind.rfind("mxf8f6f4_", 0) == 0 && kind[13] == '_' &&
                    f8f6f4(kind.substr(9, 4), &f8[0]) && f8f6f4(kind.substr(14), &f8[1]);
  if (!((k64 && StrArg(c, 0) == "m16n8k64") || (mxf8 && StrArg(c, 0) == "m16n8k32")))
    Bad(c,
        "the block-scaled mma.sync is emulated for m16n8k64 nvf4 / nvf4_packed (kind::mxf4nvf4 "
        "scale_vec::4X, ue4m3), mxf4 / mxf4_packed (kind::mxf4 scale_vec::2X, ue8m0) and m16n8k32 "
        "mxf8f6f4_<a>_<b> (kind::mxf8f6f4 scale_vec::1X, ue8m0; a, b: e4m3 / e5m2 / e3m2 / e2m3 / e2m1)");
  const int KS = k64 ? 64 : 32, P = k64 ? 8 : 4;
  const int64_t tid_a = ConstArg(c, 7), tid_b = ConstArg(c, 8);
  if (tid_a < 0 || tid_a > 1 || tid_b < 0 || tid_b > 3)
    Bad(c, "thread-id-a must be 0 or 1, thread-id-b 0 to 3");
  const BufferLoadNode* ops[3] = {Operand(c, 2), Operand(c, 3), Operand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) Bad(c, "operands must be local buffers");
  }
  auto operand_ok = [&](DataType t, int x) {
    return packed ? t == DataType::UInt(8) : mxf8 ? t == f8[x] : t.code() == DataType::Code::kFloat4E2M1;
  };
  if (!operand_ok(m[0]->t, 0) || !operand_ok(m[1]->t, 1))
    Bad(c, packed ? "A and B must be uint8 register bytes"
           : mxf8 ? "A and B must be the types the kind names"
                  : "A and B must be float4_e2m1fn");
  if (m[2]->t != DataType::Float(32)) Bad(c, "C must be float32");
  Lanes full = FullWarps(act, "mma_sync (block_scale)");
  if (full.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  const int count[3] = {packed ? 16 : 4 * P, packed ? 8 : 2 * P, 4};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, full, f[i], count[i]);
  }
  Slot* sw[2] = {Tmp(), Tmp()};
  Eval(c->args[5], full, sw[0]);
  Eval(c->args[6], full, sw[1]);
  const int group = x4 ? 16 : 32;  // k per scale
  // scale j of a row (4X: j < 4, 2X: j < 2, 1X: j = 0) from its word
  auto scale = [&](uint64_t word, int j) {
    if (x4) return DecodeUE4M3(static_cast<uint32_t>(word >> (8 * j)) & 0xFF);
    const uint32_t e = static_cast<uint32_t>(word >> (8 * j)) & 0xFF;
    return e == 255 ? std::nan("") : std::ldexp(1.0, static_cast<int>(e) - 127);
  };
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
        if (!packed) return Read(*m[x], t, f[x][t].i + P * r + e).f;
        const uint64_t byte = static_cast<uint64_t>(Read(*m[x], t, f[x][t].i + 4 * r + e / 2).i);
        return DecodeE2M1(static_cast<uint32_t>(byte >> (4 * (e % 2))) & 0xF);
      };
      for (int r = 0; r < 4; ++r)
        for (int e = 0; e < P; ++e) A[g + 8 * (r % 2)][P * tg + e + (KS / 2) * (r / 2)] = value(0, r, e);
      for (int r = 0; r < 2; ++r)
        for (int e = 0; e < P; ++e) B[P * tg + e + (KS / 2) * r][g] = value(1, r, e);
      for (int i = 0; i < 4; ++i) D[g + 8 * (i / 2)][2 * tg + i % 2] = Read(*m[2], t, f[2][t].i + i).f;
    }
    for (int row = 0; row < 16; ++row) {
      const uint64_t word = static_cast<uint64_t>(sw[0][base + 4 * (row % 8) + 2 * tid_a + row / 8].i);
      for (int j = 0; j < KS / group; ++j) sa[row][j] = scale(word, j);
    }
    for (int col = 0; col < 8; ++col) {
      const uint64_t word = static_cast<uint64_t>(sw[1][base + 4 * col + tid_b].i);
      for (int j = 0; j < KS / group; ++j) sb[col][j] = scale(word, j);
    }
    for (int k = 0; k < KS; ++k)
      for (int row = 0; row < 16; ++row)
        for (int col = 0; col < 8; ++col)
          D[row][col] += (A[row][k] * sa[row][k / group]) * (B[k][col] * sb[col][k / group]);
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
