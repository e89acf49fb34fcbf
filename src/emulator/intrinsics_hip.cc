// Thread-level builtins of AMD CDNA for the emulator, written from AMD's CDNA3 ISA guide and the
// matrix instruction calculator (not from the compiler's layout code, src/layout/mfma_fragment.cc):
// tl.mfma(shape, ab_type, &A, &B, &C), one wave64 matrix multiply-accumulate.
//
// v_mfma_f32_16x16x16{f16,bf16_1k}: lane l of a wave holds
//   A (16x16, M x K): a_v = A[l mod 16][4 floor(l / 16) + v],     v = 0..3
//   B (16x16, K x N): b_v = B[4 floor(l / 16) + v][l mod 16]
//   C / D (16x16):    d_v = D[4 floor(l / 16) + v][l mod 16]
// v_mfma_f32_32x32x8{f16,bf16_1k}: lane l holds
//   A (32x8): a_v = A[l mod 32][4 floor(l / 32) + v]; B (8x32): b_v = B[4 floor(l / 32) + v][l mod 32]
//   C / D (32x32, 16 per lane): d_r = D[8 floor(r / 4) + 4 floor(l / 32) + (r mod 4)][l mod 32]
// Products of 16-bit floats are exact in double; each output is summed in double and rounded once
// to float32 (the hardware's internal order is unspecified).
#include <algorithm>
#include <cstring>

#include "emulator/executor.h"

namespace tl::emu {
namespace {

[[noreturn]] void BadMfma(const std::string& why) {
  TL_USER_ERROR(kUnsupported, Span{}, "emulator: malformed call of tl.mfma: ", why);
}

const BufferLoadNode* MemOperand(const CallNode* c, size_t i) {
  if (i >= c->args.size()) BadMfma("missing argument " + std::to_string(i));
  Expr e = c->args[i];
  if (auto* a = As<CallNode>(e))
    if (a->op == "address_of" && a->args.size() == 1) e = a->args[0];
  auto* l = As<BufferLoadNode>(e);
  if (!l) BadMfma("argument " + std::to_string(i) + " must be a buffer element");
  return l;
}

std::string Str(const CallNode* c, size_t i) {
  auto* s = i < c->args.size() ? As<StringImmNode>(c->args[i]) : nullptr;
  if (!s) BadMfma("argument " + std::to_string(i) + " must be a string literal");
  return s->value;
}

}  // namespace

Lanes Executor::FullWaves64(const Lanes& act, const char* op) {
  // A wave is 64 consecutive threads; the whole wave must execute a wave-collective operation.
  Lanes full = FullWarps(act, op), waves;
  for (size_t i = 0; i < full.size(); ++i)
    if (full[i] % 64 == 0 && i + 63 < full.size() && full[i + 63] == full[i] + 63)
      for (int l = 0; l < 64; ++l) waves.push_back(full[i] + l);
  if (waves.size() != full.size()) {
    int first = -1;
    for (int t : full)
      if (std::find(waves.begin(), waves.end(), t) == waves.end()) {
        first = t;
        break;
      }
    Report("inactive_lanes", first, [&] {
      return std::string(op) + " is wave-collective (64 lanes) but only half of wave " +
             std::to_string(first / 64) + " executes it; the wave's operation was skipped";
    });
  }
  return waves;
}

void Executor::Mfma(const CallNode* c, const Lanes& act) {
  const std::string shape = Str(c, 0), ab = Str(c, 1);
  int R;  // the output tile is R x R, the k-depth 64 * 4 / R
  if (shape == "16x16x16")
    R = 16;
  else if (shape == "32x32x8")
    R = 32;
  else
    BadMfma("shape must be 16x16x16 or 32x32x8, got " + shape);
  const int KD = 256 / R, groups = 64 / R, outs = R * R / 64;
  if (ab != "f16" && ab != "bf16") BadMfma("ab_type must be f16 or bf16");
  const DataType abt = ab == "f16" ? DataType::Float(16) : DataType::BFloat16();
  const BufferLoadNode* ops[3] = {MemOperand(c, 2), MemOperand(c, 3), MemOperand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) BadMfma("operands must be registers (local buffers)");
  }
  if (m[0]->t != abt || m[1]->t != abt) BadMfma("A and B must be " + abt.str());
  if (m[2]->t != DataType::Float(32)) BadMfma("C must be float32");
  Lanes waves = FullWaves64(act, "mfma");
  if (waves.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  const int count[3] = {4, 4, outs};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, waves, f[i], count[i]);
  }
  for (size_t w = 0; w < waves.size(); w += 64) {
    const int base = waves[w];
    std::vector<double> A(R * KD, 0.0), B(KD * R, 0.0), D(R * R, 0.0);
    bool ok[64];
    for (int l = 0; l < 64; ++l) {
      const int t = base + l;
      ok[l] = f[0][t].i >= 0 && f[1][t].i >= 0 && f[2][t].i >= 0;
      if (!ok[l]) continue;
      for (int v = 0; v < 4; ++v) {
        int64_t ea = f[0][t].i + v, eb = f[1][t].i + v;
        NoteRead(*m[0], t, ea);
        NoteRead(*m[1], t, eb);
        A[(l % R) * KD + 4 * (l / R) + v] = LoadScalar(m[0]->Addr(t, ea), abt).f;
        B[(4 * (l / R) + v) * R + l % R] = LoadScalar(m[1]->Addr(t, eb), abt).f;
      }
      for (int r = 0; r < outs; ++r) {
        int row = R == 16 ? 4 * (l / 16) + r : 8 * (r / 4) + 4 * (l / 32) + r % 4;
        D[row * R + l % R] = Read(*m[2], t, f[2][t].i + r).f;
      }
    }
    (void)groups;
    std::vector<double> out(R * R);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < R; ++j) {
        double acc = D[i * R + j];
        for (int k = 0; k < KD; ++k) acc += A[i * KD + k] * B[k * R + j];
        out[i * R + j] = acc;
      }
    for (int l = 0; l < 64; ++l) {
      if (!ok[l]) continue;
      const int t = base + l;
      for (int r = 0; r < outs; ++r) {
        int row = R == 16 ? 4 * (l / 16) + r : 8 * (r / 4) + 4 * (l / 32) + r % 4;
        Slot v;
        v.f = RoundFloat(out[row * R + l % R], DataType::Float(32));
        Write(*m[2], t, f[2][t].i + r, v);
      }
    }
  }
}

}  // namespace tl::emu
