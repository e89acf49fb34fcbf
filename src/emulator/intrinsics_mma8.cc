// mma.sync m16n8k32 of the emulator (8-bit inputs: s8 -> s32, e4m3 / e5m2 -> f32), written from NVIDIA's
// PTX ISA ("Matrix Fragments for mma.m16n8k32"), not from the compiler's layout tables.
#include "emulator/executor.h"
#include "emulator/intrinsic_args.h"

namespace tl::emu {

void Executor::MmaSyncK32(const CallNode* c, const Lanes& act) {
  // mma.sync.aligned.m16n8k32.row.col.{s32.s8.s8.s32, f32.<a>.<b>.f32} (a, b: e4m3 / e5m2, sm_89+),
  // fragments per the PTX ISA ("Matrix Fragments for mma.m16n8k32", the same for .s8 and the fp8
  // types), g = lane>>2, tg = lane%4; each .b32 register holds four 8-bit elements:
  //   A a_i (i < 16): row g + 8*((i>>2)&1), col 4*tg + (i&3) + 16*(i >= 8)
  //   B b_i (i < 8):  row 4*tg + (i&3) + 16*(i >= 4), col g
  //   C c_i (i < 4):  row g + 8*(i >= 2),             col 2*tg + (i&1)
  // s8: integer products and sums are exact; the int32 result wraps as the hardware's does.
  // fp8: products of two fp8 values are exact in double; the 32 products and C are summed in double and
  // rounded once to float32 (the hardware's internal order and precision are unspecified).
  const std::string ab = StrArg(c, 1);
  const bool s8 = ab == "s8";
  auto fp8 = [](const std::string& n, DataType* t) {
    return (n == "e4m3" || n == "e5m2") && DataType::Parse(n == "e4m3" ? "float8_e4m3fn" : "float8_e5m2", t);
  };
  DataType at = DataType::Int(8), bt = DataType::Int(8), ct = DataType::Int(32);
  if (!s8) {
    const size_t u = ab.find('_');
    if (u == std::string::npos || !fp8(ab.substr(0, u), &at) || !fp8(ab.substr(u + 1), &bt))
      Bad(c, "m16n8k32 is emulated for ab_type s8 or <e4m3|e5m2>_<e4m3|e5m2>");
    ct = DataType::Float(32);
  }
  const BufferLoadNode* ops[3] = {Operand(c, 2), Operand(c, 3), Operand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) Bad(c, "operands must be local buffers");
  }
  if (m[0]->t != at || m[1]->t != bt) Bad(c, "A and B must be " + at.str() + " and " + bt.str());
  if (m[2]->t != ct) Bad(c, "C must be " + ct.str());
  Lanes full = FullWarps(act, "mma_sync");
  if (full.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  const int count[3] = {16, 8, 4};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, full, f[i], count[i]);
  }
  // Integers in int64 and floats in double: both hold every value and every exact product.
  auto num = [&](const Slot& v, DataType t) { return t.is_float() ? v.f : static_cast<double>(v.i); };
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    int64_t A[16][32] = {}, B[32][8] = {}, Cm[16][8] = {};
    double Af[16][32] = {}, Bf[32][8] = {}, Cf[16][8] = {};
    bool lane_ok[32];
    for (int l = 0; l < 32; ++l) {
      const int t = base + l, g = l >> 2, tg = l & 3;
      lane_ok[l] = f[0][t].i >= 0 && f[1][t].i >= 0 && f[2][t].i >= 0;
      if (!lane_ok[l]) continue;
      for (int i = 0; i < 16; ++i) {
        const int r = g + 8 * ((i >> 2) & 1), k = 4 * tg + (i & 3) + 16 * (i >= 8);
        Slot v = Read(*m[0], t, f[0][t].i + i);
        A[r][k] = v.i;
        Af[r][k] = num(v, at);
      }
      for (int i = 0; i < 8; ++i) {
        const int k = 4 * tg + (i & 3) + 16 * (i >= 4);
        Slot v = Read(*m[1], t, f[1][t].i + i);
        B[k][g] = v.i;
        Bf[k][g] = num(v, bt);
      }
      for (int i = 0; i < 4; ++i) {
        const int r = g + 8 * (i >= 2), col = 2 * tg + (i & 1);
        Slot v = Read(*m[2], t, f[2][t].i + i);
        Cm[r][col] = v.i;
        Cf[r][col] = num(v, ct);
      }
    }
    for (int l = 0; l < 32; ++l) {
      if (!lane_ok[l]) continue;
      const int t = base + l, g = l >> 2, tg = l & 3;
      for (int i = 0; i < 4; ++i) {
        int r = g + 8 * (i >= 2), col = 2 * tg + (i & 1);
        Slot v;
        if (s8) {
          int64_t acc = Cm[r][col];
          for (int k = 0; k < 32; ++k) acc += A[r][k] * B[k][col];
          v.i = WrapInt(acc, ct);
        } else {
          double acc = Cf[r][col];
          for (int k = 0; k < 32; ++k) acc += Af[r][k] * Bf[k][col];
          v.f = RoundFloat(acc, ct);
        }
        Write(*m[2], t, f[2][t].i + i, v);
      }
    }
  }
}

}  // namespace tl::emu
