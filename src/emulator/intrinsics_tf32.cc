// TF32 on the emulator: cvt.rna.tf32.f32 (tl.to_tf32) and mma.sync m16n8k8 .tf32 -> .f32, written from
// NVIDIA's PTX ISA ("cvt", "Matrix Fragments for mma.m16n8k8" with .tf32), not from the compiler's layout
// tables.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "emulator/executor.h"
#include "emulator/intrinsic_args.h"

namespace tl::emu {

namespace {

// cvt.rna.tf32.f32: keep 10 explicit mantissa bits, round to nearest with ties away from zero. The
// encoding is sign-magnitude, so adding half of the kept unit (bit 12) to the magnitude and clearing
// the 13 dropped bits rounds the magnitude up on ties; a carry into the exponent is the correct next
// binade (or infinity past the largest tf32 value). Infinities and NaNs pass through.
float RoundTf32(float x) {
  if (!std::isfinite(x)) return x;
  return FloatOfBits((BitsOfFloat(x) + 0x1000u) & ~0x1FFFu);
}

}  // namespace

void Executor::ToTf32(const CallNode* c, const Lanes& act, Slot* out) {
  if (c->args.size() != 1 || c->args[0]->dtype != DataType::Float(32) || c->dtype != DataType::Float(32))
    Bad(c, "tl.to_tf32 takes and returns float32");
  TmpScope ts(this);
  Slot* x = Tmp();
  Eval(c->args[0], act, x);
  for (int t : act) out[t].f = RoundTf32(static_cast<float>(x[t].f));
}

void Executor::MmaSyncTf32(const CallNode* c, const Lanes& act) {
  // mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32; fragments per the PTX ISA ("Matrix Fragments for
  // mma.m16n8k8", .tf32 figures), g = lane>>2, tg = lane%4, one 32-bit element per register:
  //   A a_i (i < 4): row g + 8*(i&1), col tg + 4*(i>>1)
  //   B b_i (i < 2): row tg + 4*i,    col g
  //   C c_i (i < 4): row g + 8*(i>=2), col 2*tg + (i&1)
  // The operands must be tf32 values (low 13 bits zero, as cvt.rna.tf32.f32 leaves them); anything else
  // is reported, since the hardware's treatment of the dropped bits is not specified. Products of two
  // 11-bit significands are exact in double; the 8 products and C are summed in double and rounded once
  // to float32 (the hardware's internal order and precision are unspecified).
  if (StrArg(c, 1) != "tf32") Bad(c, "m16n8k8 is emulated for ab_type tf32");
  const BufferLoadNode* ops[3] = {Operand(c, 2), Operand(c, 3), Operand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) Bad(c, "operands must be local buffers");
    if (m[i]->t != DataType::Float(32)) Bad(c, "A, B and C must be float32 registers");
  }
  Lanes full = FullWarps(act, "mma_sync");
  if (full.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  const int count[3] = {4, 2, 4};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, full, f[i], count[i]);
  }
  auto tf32 = [&](const Slot& v) {
    float x = static_cast<float>(v.f);
    if (std::isfinite(x) && (BitsOfFloat(x) & 0x1FFFu))
      Bad(c, "a tf32 operand has non-zero low 13 bits (not rounded)");
    return static_cast<double>(x);
  };
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    double A[16][8] = {}, B[8][8] = {}, Cm[16][8] = {};
    bool lane_ok[32];
    for (int l = 0; l < 32; ++l) {
      const int t = base + l, g = l >> 2, tg = l & 3;
      lane_ok[l] = f[0][t].i >= 0 && f[1][t].i >= 0 && f[2][t].i >= 0;
      if (!lane_ok[l]) continue;
      for (int i = 0; i < 4; ++i) A[g + 8 * (i & 1)][tg + 4 * (i >> 1)] = tf32(Read(*m[0], t, f[0][t].i + i));
      for (int i = 0; i < 2; ++i) B[tg + 4 * i][g] = tf32(Read(*m[1], t, f[1][t].i + i));
      for (int i = 0; i < 4; ++i) Cm[g + 8 * (i >= 2)][2 * tg + (i & 1)] = Read(*m[2], t, f[2][t].i + i).f;
    }
    for (int l = 0; l < 32; ++l) {
      if (!lane_ok[l]) continue;
      const int t = base + l, g = l >> 2, tg = l & 3;
      for (int i = 0; i < 4; ++i) {
        const int r = g + 8 * (i >= 2), col = 2 * tg + (i & 1);
        double acc = Cm[r][col];
        for (int k = 0; k < 8; ++k) acc += A[r][k] * B[k][col];
        Slot v;
        v.f = RoundFloat(acc, DataType::Float(32));
        Write(*m[2], t, f[2][t].i + i, v);
      }
    }
  }
}

}  // namespace tl::emu
