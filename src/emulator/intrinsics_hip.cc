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
// v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (gfx940+) and, on CDNA4 (gfx950, AMD's CDNA4 ISA guide), the
// f16 / bf16 v_mfma_f32_16x16x32_{f16,bf16}: lane l holds 8 elements of A and of B
//   A (16x32): a_v = A[l mod 16][8 floor(l / 16) + v],     v = 0..7
//   B (32x16): b_v = B[8 floor(l / 16) + v][l mod 16];     C / D as for 16x16x16
// v_mfma_f32_32x32x16_{f16,bf16} (gfx950) and _{fp8,bf8}_{fp8,bf8} (gfx940+): 8 elements a lane,
//   A (32x16): a_v = A[l mod 32][8 floor(l / 32) + v]; B (16x32): b_v = B[8 floor(l / 32) + v][l mod 32]
//   C / D as for 32x32x8
// CDNA4's f8f6f4 family, v_mfma_f32_16x16x128_f8f6f4 / 32x32x64_f8f6f4 (here unscaled, 8-bit OCP operands):
// lane l holds 32 values of A and of B (8 VGPRs), lane group g = floor(l / R) the g-th 32-value block of
// the K dimension: a lane's value v of A (row l mod R) multiplies the same lane group's value v of B (column
// l mod R); C / D as for the 16x16 / 32x32 shapes above. (Which k a (g, v) pair is called does not change an
// unscaled product; the block-per-lane-group pairing is what block scaling rests on: one scale a lane.)
// v_mfma_scale_f32_*_f8f6f4 (tl.mfma with two more arguments): each lane's 32 values of A are multiplied by
// 2^(sa - 127), sa byte 0 of the lane's scale operand (E8M0; 255 is NaN), and B's by its own, before the
// products are summed (exact here: power-of-two factors of double values). CDNA3's 8-bit MFMAs read the bytes
// in AMD's FNUZ formats: fp8 = E4M3FNUZ (bias 8), bf8 = E5M2FNUZ (bias 16); no infinities, no negative zero,
// 0x80 the only NaN (the buffers' dtypes say OCP; the bytes are what the instruction reads).
// tl.fp8_to_fnuz(&x, n, "e4m3"|"e5m2") re-encodes n OCP bytes in place: -0 -> 0, NaN (and e5m2 infinity) ->
// 0x80, others unchanged (the same bits are half the value in FNUZ). CDNA4's read the OCP formats (E4M3FN,
// E5M2) the tensors hold; the IR names those operands e4m3 / e5m2. CDNA4's f8f6f4 shapes also read fp4
// (E2M1, format 4; "e2m1" in the IR): a lane's 32 values in 16 bytes (4 VGPRs), value v in byte v / 2, the
// low nibble for even v (the register format of the ISA's FP4 operands). fp4 tiles hold one value a byte:
// tl.fp4_pack(&x, n, mode) packs n such bytes of a lane's registers in place into n / 2 (the rest zero)
// first: "ordered" as above, or "interleaved" (value i and i + 4 of each 8 in one byte: cheaper, and the sum
// is the same when both operands are fp4 packed alike, since the MFMA pairs A's and B's value v). They read
// fp6 too (E2M3 format 2, E3M2 format 3; "e2m3" / "e3m2" in the IR): a lane's 32 values in 24 bytes (6
// VGPRs), a contiguous 6-bit stream, value v at bits 6v .. 6v + 5 of the lane's bytes, lowest bit first. (Our
// ISA references do not lay the fp6 operand out; this is the order AMD's own packed-FP6 data uses, four
// values in three bytes, the first lowest: docs/hip.md.) tl.fp6_pack(&x, n) packs n one-a-byte fp6 codes so
// in place. Products of 16- and 8-bit floats are exact in double; each output is summed in double and rounded
// once to float32 (the hardware's internal order is unspecified).
#include <algorithm>
#include <functional>
#include <cmath>
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

// A byte in AMD's FNUZ 8-bit float formats (CDNA3 ISA): E exponent bits with bias 2^(E-1), M mantissa
// bits; 0x80 is NaN; there are no infinities.
double DecodeFnuz(uint8_t b, int E, int M) {
  if (b == 0x80) return std::nan("");
  const int bias = 1 << (E - 1), ex = (b >> M) & ((1 << E) - 1), man = b & ((1 << M) - 1);
  double mag = ex == 0 ? std::ldexp(man, 1 - bias - M) : std::ldexp((1 << M) + man, ex - bias - M);
  return (b & 0x80) ? -mag : mag;
}

// A byte in the OCP 8-bit float formats (OCP 8-bit floating point specification): E4M3 (bias 7, no
// infinities, S.1111.111 the only NaNs) and E5M2 (bias 15, IEEE-like: exponent 31 is infinity / NaN).
double DecodeOcp8(uint8_t b, int E, int M) {
  const int bias = (1 << (E - 1)) - 1, ex = (b >> M) & ((1 << E) - 1), man = b & ((1 << M) - 1);
  const bool neg = (b & 0x80) != 0;
  if (E == 4 && ex == 15 && man == 7) return std::nan("");
  if (E == 5 && ex == 31) return man ? std::nan("") : (neg ? -HUGE_VAL : HUGE_VAL);
  double mag = ex == 0 ? std::ldexp(man, 1 - bias - M) : std::ldexp((1 << M) + man, ex - bias - M);
  return neg ? -mag : mag;
}

}  // namespace

void Executor::Fp8ToFnuz(const CallNode* c, const Lanes& act) {
  if (c->args.size() != 3) BadMfma("tl.fp8_to_fnuz expects (&operand, bytes, \"e4m3\" | \"e5m2\")");
  const BufferLoadNode* op = MemOperand(c, 0);
  int64_t n = 0;
  if (!AsConstInt(c->args[1], &n) || n < 1) BadMfma("tl.fp8_to_fnuz: the byte count must be a literal");
  const bool e5m2 = Str(c, 2) == "e5m2";
  Mem& m = MemOf(op->buffer.get());
  if (m.t.bytes() != 1 || m.shared() || m.global())
    BadMfma("tl.fp8_to_fnuz: the operand must be 8-bit registers");
  TmpScope ts(this);
  Slot* f = Tmp();
  Locate(op->buffer, op->indices, act, f, n);
  for (int t : act) {
    if (f[t].i < 0) continue;
    for (int64_t e = f[t].i; e < f[t].i + n; ++e) {
      NoteRead(m, t, e);
      uint8_t* p = static_cast<uint8_t*>(m.Addr(t, e));
      if (*p == 0x80)
        *p = 0;
      else if ((*p & 0x7f) >= (e5m2 ? 0x7c : 0x7f))
        *p = 0x80;
      NoteWrite(m, t, e);
    }
  }
}

// The repacking of a lane's one-a-byte sub-byte codes in place (tl.fp4_pack / tl.fp6_pack): `n` bytes from
// the operand (arg 0; n the literal arg 1, a multiple of `group`), each masked to its low `bits`, repacked by
// `pack` into n bytes (the tail zero).
void Executor::RepackOperand(
    const CallNode* c, const Lanes& act, const char* name, int64_t group, int bits,
    const std::function<void(const std::vector<uint8_t>&, std::vector<uint8_t>*)>& pack) {
  const BufferLoadNode* op = MemOperand(c, 0);
  int64_t n = 0;
  if (!AsConstInt(c->args[1], &n) || n < group || n % group)
    BadMfma(std::string(name) + ": the value count must be a literal multiple of " + std::to_string(group));
  Mem& m = MemOf(op->buffer.get());
  if (m.t.bytes() != 1 || m.shared() || m.global())
    BadMfma(std::string(name) + ": the operand must be 8-bit registers");
  TmpScope ts(this);
  Slot* f = Tmp();
  Locate(op->buffer, op->indices, act, f, n);
  std::vector<uint8_t> v(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int t : act) {
    if (f[t].i < 0) continue;
    for (int64_t e = 0; e < n; ++e) {
      NoteRead(m, t, f[t].i + e);
      v[static_cast<size_t>(e)] = *static_cast<const uint8_t*>(m.Addr(t, f[t].i + e)) & ((1u << bits) - 1);
    }
    std::fill(out.begin(), out.end(), uint8_t{0});
    pack(v, &out);
    for (int64_t e = 0; e < n; ++e) {
      *static_cast<uint8_t*>(m.Addr(t, f[t].i + e)) = out[static_cast<size_t>(e)];
      NoteWrite(m, t, f[t].i + e);
    }
  }
}

void Executor::Fp6Pack(const CallNode* c, const Lanes& act) {
  if (c->args.size() != 2) BadMfma("tl.fp6_pack expects (&operand, values)");
  RepackOperand(c, act, "tl.fp6_pack", 4, 6, [](const std::vector<uint8_t>& v, std::vector<uint8_t>* out) {
    for (size_t e = 0; e < v.size();
         ++e)  // value e at bits 6e .. 6e + 5 of the byte stream, the lowest bit first
      for (size_t b = 0; b < 6; ++b)
        if ((v[e] >> b) & 1) (*out)[(6 * e + b) / 8] |= static_cast<uint8_t>(1u << ((6 * e + b) % 8));
  });
}

void Executor::Fp4Pack(const CallNode* c, const Lanes& act) {
  if (c->args.size() != 3) BadMfma("tl.fp4_pack expects (&operand, values, \"ordered\" | \"interleaved\")");
  const bool inter = Str(c, 2) == "interleaved";
  RepackOperand(c, act, "tl.fp4_pack", 2, 4,
                [inter](const std::vector<uint8_t>& v, std::vector<uint8_t>* out) {
                  // ordered: value 2i in the low nibble of byte i, 2i + 1 in its high nibble; interleaved
                  // (both operands fp4, so that their k orders agree): in each group of 8 values, byte i of
                  // the group's word holds values i (low) and i + 4 (high)
                  for (size_t e = 0; e < v.size() / 2; ++e) {
                    const size_t lo = inter ? (e / 4) * 8 + e % 4 : 2 * e, hi = inter ? lo + 4 : 2 * e + 1;
                    (*out)[e] = static_cast<uint8_t>(v[lo] | (v[hi] << 4));
                  }
                });
}

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
  int R, KV;  // the output tile is R x R; each lane supplies KV k values of A and of B
  if (shape == "16x16x16" || shape == "32x32x8") {
    R = shape == "16x16x16" ? 16 : 32;
    KV = 4;
  } else if (shape == "16x16x32" || shape == "32x32x16") {
    R = shape == "16x16x32" ? 16 : 32;
    KV = 8;
  } else if (shape == "16x16x128" || shape == "32x32x64") {
    R = shape == "16x16x128" ? 16 : 32;
    KV = 32;
  } else {
    BadMfma("shape must be 16x16x16, 32x32x8, 16x16x32, 32x32x16, 16x16x128 or 32x32x64, got " + shape);
  }
  const int groups = 64 / R, KD = KV * groups, outs = R * R / 64;
  // 8-bit operands: "fp8" / "bf8" name CDNA3's FNUZ formats, "e4m3" / "e5m2" the OCP ones CDNA4 reads
  enum Fmt { kF16, kBF16, kFnuz43, kFnuz52, kOcp43, kOcp52, kOcp21, kOcp23, kOcp32 };
  auto fmt8 = [&](const std::string& n, Fmt* f) {
    if (n == "fp8")
      *f = kFnuz43;
    else if (n == "bf8")
      *f = kFnuz52;
    else if (n == "e4m3")
      *f = kOcp43;
    else if (n == "e5m2")
      *f = kOcp52;
    else if (n == "e2m1")
      *f = kOcp21;
    else if (n == "e2m3")
      *f = kOcp23;
    else if (n == "e3m2")
      *f = kOcp32;
    else
      return false;
    return true;
  };
  Fmt fa = kF16, fb = kF16;
  const size_t us = ab.find('_');
  const bool eight = us != std::string::npos;
  if (eight) {
    if (KV == 4 || !fmt8(ab.substr(0, us), &fa) || !fmt8(ab.substr(us + 1), &fb) ||
        ((fa == kFnuz43 || fa == kFnuz52) != (fb == kFnuz43 || fb == kFnuz52)) ||
        (KV == 32 && (fa == kFnuz43 || fa == kFnuz52)) || (KV != 32 && (fa >= kOcp21 || fb >= kOcp21)))
      BadMfma(
          "8-bit ab_type must be <a>_<b> of fp8 / bf8 (FNUZ, 16x16x32 / 32x32x16) or of e4m3 / e5m2 (OCP, "
          "also 16x16x128 / 32x32x64), or with e2m1 / e2m3 / e3m2 (fp4 / fp6, 16x16x128 / 32x32x64 only); "
          "got " +
          ab + " with " + shape);
  } else if ((ab == "f16" || ab == "bf16") && KV != 32) {
    fa = fb = ab == "f16" ? kF16 : kBF16;
  } else {
    BadMfma("ab_type must be f16, bf16 or an 8-bit pair, got " + ab);
  }
  const DataType abt = ab == "f16" ? DataType::Float(16) : DataType::BFloat16();
  // v_mfma_scale_*: two more arguments, each lane's scale word for its A block and for its B block, and
  // optionally the op_sel of each (literals 0..3: which byte of the word is the E8M0 scale; 0 when absent)
  const bool scaled = c->args.size() == 7 || c->args.size() == 9;
  if (c->args.size() != 5 && !scaled)
    BadMfma("expects (shape, ab_type, &A, &B, &C[, scale_a, scale_b[, op_sel_a, op_sel_b]])");
  int64_t opsel[2] = {0, 0};
  for (int i = 0; i < 2 && c->args.size() == 9; ++i)
    if (!AsConstInt(c->args[7 + i], &opsel[i]) || opsel[i] < 0 || opsel[i] > 3)
      BadMfma("op_sel must be a literal 0..3 (the scale word's byte)");
  if (scaled && (KV != 32 || !eight))
    BadMfma("scale operands belong to the f8f6f4 shapes (16x16x128, 32x32x64) with OCP 8-bit operands");
  auto decode8 = [](uint8_t b, Fmt f) {
    switch (f) {
      case kFnuz43: return DecodeFnuz(b, 4, 3);
      case kFnuz52: return DecodeFnuz(b, 5, 2);
      case kOcp43: return DecodeOcp8(b, 4, 3);
      case kOcp21: return DecodeE2M1(b);  // an fp4 tile's byte: its code in the low nibble
      case kOcp23: return DecodeMx(b, 2, 3);  // fp6: the code in the low 6 bits
      case kOcp32: return DecodeMx(b, 3, 2);
      default: return DecodeOcp8(b, 5, 2);
    }
  };
  const BufferLoadNode* ops[3] = {MemOperand(c, 2), MemOperand(c, 3), MemOperand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) BadMfma("operands must be registers (local buffers)");
  }
  if (eight ? m[0]->t.bytes() != 1 || m[1]->t.bytes() != 1 : m[0]->t != abt || m[1]->t != abt)
    BadMfma("A and B must be " + (eight ? std::string("8-bit") : abt.str()));
  if (m[2]->t != DataType::Float(32)) BadMfma("C must be float32");
  Lanes waves = FullWaves64(act, "mfma");
  if (waves.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  // the bytes a lane's operand occupies: 32 values a byte, fp4 two a byte (16), fp6 a 6-bit stream (24)
  auto span_of = [&](Fmt fm) {
    return fm == kOcp21 ? KV / 2 : fm == kOcp23 || fm == kOcp32 ? 3 * KV / 4 : KV;
  };
  const int count[3] = {span_of(fa), span_of(fb), outs};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, waves, f[i], count[i]);
  }
  Slot* sc[2] = {nullptr, nullptr};
  if (scaled)
    for (int i = 0; i < 2; ++i) {
      sc[i] = Tmp();
      Eval(c->args[5 + i], waves, sc[i]);
    }
  // 2^(s - 127) for the E8M0 byte s; 255 is NaN (OCP MX specification)
  auto e8m0 = [&](int i, int t) {
    const int64_t s8 = (AsInt(sc[i][t], c->args[5 + i]->dtype) >> (8 * opsel[i])) & 0xFF;
    return s8 == 255 ? std::nan("") : std::ldexp(1.0, static_cast<int>(s8) - 127);
  };
  for (size_t w = 0; w < waves.size(); w += 64) {
    const int base = waves[w];
    std::vector<double> A(R * KD, 0.0), B(KD * R, 0.0), D(R * R, 0.0);
    bool ok[64];
    for (int l = 0; l < 64; ++l) {
      const int t = base + l;
      ok[l] = f[0][t].i >= 0 && f[1][t].i >= 0 && f[2][t].i >= 0;
      if (!ok[l]) continue;
      for (int i = 0; i < 2; ++i)  // the operand's bytes (its registers' rest is not read)
        for (int e = 0; e < count[i]; ++e) NoteRead(*m[i], t, f[i][t].i + e);
      for (int v = 0; v < KV; ++v) {
        int64_t ea = f[0][t].i + v, eb = f[1][t].i + v;
        double av, bv;
        if (eight) {
          // fp4 operands are packed (tl.fp4_pack): value v in byte v / 2, the low nibble for even v; fp6 ones
          // (tl.fp6_pack) a 6-bit stream: value v at bits 6v .. 6v + 5 of the lane's bytes, the lowest first
          auto byte = [&](int i, int64_t e, Fmt fm) {
            if (fm == kOcp23 || fm == kOcp32) {
              const int64_t bit = 6 * v, at = f[i][t].i + bit / 8;
              const unsigned lo = *static_cast<const uint8_t*>(m[i]->Addr(t, at));
              const unsigned hi = bit % 8 > 2 ? *static_cast<const uint8_t*>(m[i]->Addr(t, at + 1)) : 0u;
              return static_cast<uint8_t>(((lo | (hi << 8)) >> (bit % 8)) & 0x3f);
            }
            if (fm != kOcp21) return *static_cast<const uint8_t*>(m[i]->Addr(t, e));
            const uint8_t b = *static_cast<const uint8_t*>(m[i]->Addr(t, f[i][t].i + v / 2));
            return static_cast<uint8_t>(v % 2 ? b >> 4 : b & 0x0f);
          };
          av = decode8(byte(0, ea, fa), fa);
          bv = decode8(byte(1, eb, fb), fb);
        } else {
          av = LoadScalar(m[0]->Addr(t, ea), abt).f;
          bv = LoadScalar(m[1]->Addr(t, eb), abt).f;
        }
        if (scaled) {
          av *= e8m0(0, t);
          bv *= e8m0(1, t);
        }
        A[(l % R) * KD + KV * (l / R) + v] = av;
        B[(KV * (l / R) + v) * R + l % R] = bv;
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
