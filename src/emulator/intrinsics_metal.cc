// Metal's SIMD-group matrix builtins in the emulator, written from Apple's Metal Shading Language
// specification (section "SIMD-group matrix functions"), not from the compiler's layout code:
//   simdgroup_load(d, src, elements_per_row, origin, transpose_matrix)
//       d(r, c) = src[r * elements_per_row + c], or src[c * elements_per_row + r] when transposed
//   simdgroup_store(a, dst, elements_per_row, origin, transpose_matrix)   the inverse
//   simdgroup_multiply_accumulate(d, a, b, c)                            d = a * b + c
// all on 8x8 matrices, executed by the 32 threads of a SIMD-group together with one pointer.
// The thread-level IR names the pointer as the element at the matrix origin (`src[origin]`) and a
// matrix as the first of its two elements in a local buffer, `M[2 * t]` (src/transform/metal/).
//
// The specification leaves unspecified which thread holds which matrix element, and the compiler
// never reads them; the emulator keeps element e (row-major) of a matrix in lane e % 32, slot
// e / 32 -- deliberately not the mma accumulator layout, so a lowering that read matrix elements
// directly would compute wrong results here. Products are summed in double and rounded once to the
// destination type (the hardware's order and intermediate precision are not specified).
#include "emulator/executor.h"

namespace tl::emu {
namespace {

[[noreturn]] void Bad(const CallNode* c, const std::string& why) {
  TL_USER_ERROR(kUnsupported, Span{}, "emulator: malformed call of ", c->op, ": ", why);
}

const BufferLoadNode* Elem(const CallNode* c, size_t i) {
  auto* l = i < c->args.size() ? As<BufferLoadNode>(c->args[i]) : nullptr;
  if (!l) Bad(c, "argument " + std::to_string(i) + " must be a buffer element");
  return l;
}

int64_t ConstArg(const CallNode* c, size_t i) {
  int64_t v;
  if (i >= c->args.size() || !AsConstInt(c->args[i], &v))
    Bad(c, "argument " + std::to_string(i) + " must be an integer literal");
  return v;
}

}  // namespace

bool Executor::ExecMetalIntrinsic(const CallNode* c, const Lanes& act) {
  const std::string& op = c->op;
  bool load = op == "tl.simdgroup_load", store = op == "tl.simdgroup_store", mma = op == "tl.simdgroup_mma";
  if (!load && !store && !mma) return false;
  Lanes full = FullWarps(act, op.c_str() + 3);
  if (full.empty()) return true;
  TmpScope ts(this);
  // The matrix operands: 2 elements per lane of a local buffer.
  auto matrix = [&](size_t i, Slot* flat) -> Mem& {
    const BufferLoadNode* m = Elem(c, i);
    Mem& mm = MemOf(m->buffer.get());
    if (mm.global() || mm.shared()) Bad(c, "a matrix operand must be a local buffer");
    Locate(m->buffer, m->indices, full, flat, 2);
    return mm;
  };
  auto elem = [](int64_t e) { return std::pair<int, int64_t>{static_cast<int>(e % 32), e / 32}; };
  if (mma) {
    Slot* f[4];
    Mem* m[4];
    for (size_t i = 0; i < 4; ++i) {
      f[i] = Tmp();
      m[i] = &matrix(i, f[i]);
    }
    for (size_t w = 0; w < full.size(); w += 32) {
      const int base = full[w];
      bool ok = true;
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i) ok &= f[i][base + l].i >= 0;
      if (!ok) continue;  // reported by Locate
      double X[3][8][8];
      for (int i = 0; i < 3; ++i)
        for (int64_t e = 0; e < 64; ++e) {
          auto [l, s] = elem(e);
          X[i][e / 8][e % 8] = Read(*m[i + 1], base + l, f[i + 1][base + l].i + s).f;
        }
      for (int64_t e = 0; e < 64; ++e) {
        int r = static_cast<int>(e / 8), col = static_cast<int>(e % 8);
        double acc = X[2][r][col];
        for (int k = 0; k < 8; ++k) acc += X[0][r][k] * X[1][k][col];
        auto [l, s] = elem(e);
        Slot v;
        v.f = acc;
        Write(*m[0], base + l, f[0][base + l].i + s, v);
      }
    }
    res_->lane_ops += static_cast<int64_t>(full.size());
    return true;
  }
  // load / store: (matrix, memory) in load order, (memory, matrix) in store order.
  const BufferLoadNode* ml = Elem(c, load ? 1 : 0);
  Mem& mem = MemOf(ml->buffer.get());
  if (!mem.global() && !mem.shared()) Bad(c, "the memory operand must be device or threadgroup memory");
  int64_t stride = ConstArg(c, 2), trans = ConstArg(c, 3);
  Slot* mf = Tmp();
  Mem& mat = matrix(load ? 0 : 1, mf);
  if (mat.t != mem.t) Bad(c, "the matrix and the memory must have one element type");
  Slot* origin = Tmp();
  Locate(ml->buffer, ml->indices, full, origin);
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    // One pointer for the SIMD-group: every thread must pass the same one.
    bool same = true;
    for (int l = 1; l < 32; ++l) same &= origin[base + l].i == origin[base].i;
    if (!same) {
      Report("simdgroup_divergence", base, [&] {
        return op.substr(3) + " of '" + ml->buffer->name +
               "': the threads of the SIMD-group pass different pointers; it was not performed";
      });
      continue;
    }
    if (origin[base].i < 0) continue;  // reported by Locate
    bool ok = true;
    for (int l = 0; l < 32; ++l) ok &= mf[base + l].i >= 0;
    if (!ok) continue;
    for (int64_t e = 0; e < 64; ++e) {
      int64_t r = e / 8, col = e % 8;
      int64_t at = origin[base].i + (trans ? col * stride + r : r * stride + col);
      auto [l, s] = elem(e);
      int t = base + l;
      if (at < 0 || at >= mem.n) {
        Report("out_of_bounds", t, [&] {
          return std::string(mem.shared() ? "shared" : "global") + " buffer '" + ml->buffer->name +
                 "' element " + std::to_string(at) + " (matrix element (" + std::to_string(r) + ", " +
                 std::to_string(col) + ") of " + op.substr(3) + ") outside its " + std::to_string(mem.n) +
                 " elements; the access was not performed";
        });
        continue;
      }
      if (load)
        Write(mat, t, mf[t].i + s, Read(mem, t, at));
      else
        Write(mem, t, at, Read(mat, t, mf[t].i + s));
    }
  }
  res_->lane_ops += static_cast<int64_t>(full.size());
  return true;
}

}  // namespace tl::emu
