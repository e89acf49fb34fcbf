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

// ---- Metal 4 cooperative tensors ------------------------------------------------------------------------
// Written from Apple's description of MetalPerformancePrimitives' matmul2d (MPPTensorOpsMatMul2d.h): a
// matmul2d_descriptor(m, n, k, transpose_left, transpose_right, ...) operation computes
// destination(m x n) += left(m x k) * right(k x n); a left tensor stored transposed is k x m (element (r, c)
// of the product's left operand at column r of stored row c), a right one n x k. Tensors here are rows
// `stride` elements apart in device or threadgroup memory; cooperative tensors are opaque objects held by the
// SIMD-group's threads together, touched only through load / store from tensors (and, in MSL, an
// index API this compiler does not use).
//
// The thread-level IR (src/target/metal/lower_gemm_simdgroup.cc) names a cooperative tensor as the first of
// its elements in a local buffer, `T[e]`, one lane's share (rows * cols / 32 elements) each:
//   tl.coop_load(T[e], mem[origin], stride, role, m, n, k, ta, tb)     role 0: left (m x k), 2: destination
//   tl.coop_store(mem[origin], T[e], stride, role, m, n, k, ta, tb)    destination only
//   tl.coop_mma(D[e], A[e], B[origin], b_stride, m, n, k, ta, tb)      D += A * B, B a right tensor in memory
// Which thread holds which element is not specified, so the emulator scrambles it on purpose: element
// (r, c) of a rows x cols cooperative tensor, flat index f = r * cols + c, lives at p = (f * a + b) mod size,
// lane p % 32, slot p / 32, with a multiplier `a` coprime to the size that differs between the left and
// the destination role: code that assumed any layout would read the wrong elements here.
namespace {
int64_t Gcd(int64_t a, int64_t b) { return b ? Gcd(b, a % b) : a; }
struct CoopShape {
  int64_t rows = 0, cols = 0, mul = 1, add = 0;
  std::pair<int, int64_t> At(int64_t r, int64_t c) const {
    const int64_t size = rows * cols, p = ((r * cols + c) * mul + add) % size;
    return {static_cast<int>(p % 32), p / 32};
  }
};
CoopShape CoopOf(int64_t role, int64_t m, int64_t n, int64_t k) {
  CoopShape s;
  s.rows = m;
  s.cols = role == 0 ? k : n;
  const int64_t size = s.rows * s.cols;
  s.mul = role == 0 ? 53 : 37;
  while (Gcd(s.mul, size) != 1) ++s.mul;
  s.add = 11 + 3 * role + m;
  return s;
}
}  // namespace

bool Executor::ExecMetalCoop(const CallNode* c, const Lanes& act) {
  const std::string& op = c->op;
  const bool load = op == "tl.coop_load", store = op == "tl.coop_store", mma = op == "tl.coop_mma";
  if (!load && !store && !mma) return false;
  if (c->args.size() != 9) Bad(c, "expected 9 arguments");
  const int64_t m = ConstArg(c, 4), n = ConstArg(c, 5), k = ConstArg(c, 6), ta = ConstArg(c, 7),
                tb = ConstArg(c, 8);
  if (m <= 0 || n <= 0 || k <= 0 || (m * n) % 32 || (m * k) % 32)
    Bad(c, "a matmul2d shape the emulator does not take");
  Lanes full = FullWarps(act, op.c_str() + 3);
  if (full.empty()) return true;
  TmpScope ts(this);
  // A cooperative-tensor operand: rows * cols / 32 elements a lane, from its first.
  auto tensor = [&](size_t i, int64_t per, Slot* flat) -> Mem& {
    const BufferLoadNode* t = Elem(c, i);
    Mem& mm = MemOf(t->buffer.get());
    if (mm.global() || mm.shared()) Bad(c, "a cooperative tensor operand must be a local buffer");
    Locate(t->buffer, t->indices, full, flat, per);
    return mm;
  };
  // A memory operand: one pointer for the SIMD-group.
  auto pointer = [&](size_t i, Slot* origin, int base) -> bool {
    const BufferLoadNode* l = Elem(c, i);
    bool same = true;
    for (int q = 1; q < 32; ++q) same &= origin[base + q].i == origin[base].i;
    if (!same)
      Report("simdgroup_divergence", base, [&] {
        return op.substr(3) + " of '" + l->buffer->name +
               "': the threads of the SIMD-group pass different pointers; it was not performed";
      });
    return same && origin[base].i >= 0;
  };
  // Element (r, c) of a rows x cols tensor in memory, stored transposed or not, for lane `t`'s report.
  auto mem_at = [&](const BufferLoadNode* l, Mem& mem, int64_t origin, int64_t stride, bool trans, int64_t r,
                    int64_t col, int t, int64_t* at) {
    *at = origin + (trans ? col * stride + r : r * stride + col);
    if (*at >= 0 && *at < mem.n) return true;
    Report("out_of_bounds", t, [&] {
      return std::string(mem.shared() ? "shared" : "global") + " buffer '" + l->buffer->name + "' element " +
             std::to_string(*at) + " (tensor element (" + std::to_string(r) + ", " + std::to_string(col) +
             ") of " + op.substr(3) + ") outside its " + std::to_string(mem.n) +
             " elements; the access was not performed";
    });
    return false;
  };
  if (mma) {
    const CoopShape D = CoopOf(2, m, n, k), A = CoopOf(0, m, n, k);
    Slot *fd = Tmp(), *fa = Tmp(), *fb = Tmp();
    Mem& md = tensor(0, m * n / 32, fd);
    Mem& ma = tensor(1, m * k / 32, fa);
    const BufferLoadNode* bl = Elem(c, 2);
    Mem& mb = MemOf(bl->buffer.get());
    if (!mb.global() && !mb.shared()) Bad(c, "the right operand must be device or threadgroup memory");
    if (ma.t != mb.t) Bad(c, "the left and right operands must have one element type");
    const bool ints = ma.t == DataType::Int(8) || ma.t == DataType::UInt(8);
    if (ints ? md.t != DataType::Int(32) : !(md.t == DataType::Float(32) || md.t == DataType::Float(16)))
      Bad(c, "matmul2d takes " + ma.t.str() + " operands into " + (ints ? "int32" : "float32 or float16") +
                 ", not " + md.t.str());
    Locate(bl->buffer, bl->indices, full, fb);
    const int64_t stride = ConstArg(c, 3);
    for (size_t w = 0; w < full.size(); w += 32) {
      const int base = full[w];
      bool ok = pointer(2, fb, base);
      for (int q = 0; q < 32; ++q) ok &= fd[base + q].i >= 0 && fa[base + q].i >= 0;
      if (!ok) continue;
      std::vector<double> X(m * k), Y(k * n);
      std::vector<int64_t> Xi(ints ? m * k : 0), Yi(ints ? k * n : 0);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t q = 0; q < k; ++q) {
          auto [l, sl] = A.At(r, q);
          Slot v = Read(ma, base + l, fa[base + l].i + sl);
          X[r * k + q] = v.f;
          if (ints) Xi[r * k + q] = v.i;
        }
      bool inb = true;
      for (int64_t q = 0; q < k && inb; ++q)
        for (int64_t col = 0; col < n && inb; ++col) {
          int64_t at = 0;
          inb = mem_at(bl, mb, fb[base].i, stride, tb != 0, q, col, base, &at);
          if (!inb) break;
          Slot v = Read(mb, base, at);
          Y[q * n + col] = v.f;
          if (ints) Yi[q * n + col] = v.i;
        }
      if (!inb) continue;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col) {
          auto [l, sl] = D.At(r, col);
          const int t = base + l;
          Slot acc = Read(md, t, fd[t].i + sl);
          if (ints) {
            int64_t sum = acc.i;
            for (int64_t q = 0; q < k; ++q) sum += Xi[r * k + q] * Yi[q * n + col];
            acc.i = static_cast<int32_t>(static_cast<uint32_t>(sum));  // int32 wraps
          } else {
            double sum = acc.f;  // summed in double, rounded once to the destination type
            for (int64_t q = 0; q < k; ++q) sum += X[r * k + q] * Y[q * n + col];
            acc.f = sum;
          }
          Write(md, t, fd[t].i + sl, acc);
        }
    }
    res_->lane_ops += static_cast<int64_t>(full.size());
    return true;
  }
  // load / store: (tensor, memory) in load order, (memory, tensor) in store order.
  const int64_t role = ConstArg(c, 3);
  if (role != 0 && role != 2) Bad(c, "role must be 0 (left) or 2 (destination)");
  if (store && role != 2) Bad(c, "only destination cooperative tensors are stored");
  const CoopShape S = CoopOf(role, m, n, k);
  const BufferLoadNode* ml = Elem(c, load ? 1 : 0);
  Mem& mem = MemOf(ml->buffer.get());
  if (!mem.global() && !mem.shared()) Bad(c, "the memory operand must be device or threadgroup memory");
  const int64_t stride = ConstArg(c, 2);
  Slot* tf = Tmp();
  Mem& ten = tensor(load ? 0 : 1, S.rows * S.cols / 32, tf);
  if (ten.t != mem.t) Bad(c, "the cooperative tensor and the memory must have one element type");
  Slot* origin = Tmp();
  Locate(ml->buffer, ml->indices, full, origin);
  const bool trans = role == 0 && ta != 0;
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    if (!pointer(load ? 1 : 0, origin, base)) continue;
    bool ok = true;
    for (int q = 0; q < 32; ++q) ok &= tf[base + q].i >= 0;
    if (!ok) continue;
    for (int64_t r = 0; r < S.rows; ++r)
      for (int64_t col = 0; col < S.cols; ++col) {
        auto [l, sl] = S.At(r, col);
        const int t = base + l;
        int64_t at = 0;
        if (!mem_at(ml, mem, origin[base].i, stride, trans, r, col, t, &at)) continue;
        if (load)
          Write(ten, t, tf[t].i + sl, Read(mem, t, at));
        else
          Write(mem, t, at, Read(ten, t, tf[t].i + sl));
      }
  }
  res_->lane_ops += static_cast<int64_t>(full.size());
  return true;
}

bool Executor::ExecMetalIntrinsic(const CallNode* c, const Lanes& act) {
  const std::string& op = c->op;
  if (op.rfind("tl.coop_", 0) == 0) return ExecMetalCoop(c, act);
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
