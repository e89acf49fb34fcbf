// Helpers shared by the emulator's tests: dtypes, half-precision encodings, buffer and statement
// constructors, a kernel-launch wrapper and report counting.
#pragma once
#include <gtest/gtest.h>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include "emulator/emulator.h"
#include "emulator/numeric.h"
#include "ir/function.h"

namespace tl::emu {
namespace emu_test {

inline const DataType kF16 = DataType::Float(16);
inline const DataType kBF16 = DataType::BFloat16();
inline const DataType kF32 = DataType::Float(32);
inline const DataType kI32 = DataType::Int(32);

inline uint16_t H(double x) { return static_cast<uint16_t>(EncodeMinifloat(x, 5, 10, false)); }
inline double FromH(uint16_t b) { return DecodeMinifloat(b, 5, 10, false); }
inline uint16_t BH(double x) { return static_cast<uint16_t>(EncodeMinifloat(x, 8, 7, false)); }

inline Span L(int line) { return Span{"emu_kernel.py", line, 5}; }

inline Buffer Global(const std::string& n, DataType t, std::vector<Expr> shape) {
  return MakeBuffer(n, t, std::move(shape), Scope::kGlobal);
}
inline Buffer Shared(const std::string& n, DataType t, int64_t size) {
  return MakeBuffer(n, t, {Int(size)}, Scope::kShared);
}
inline Buffer Local(const std::string& n, DataType t, int64_t size) {
  return MakeBuffer(n, t, {Int(size)}, Scope::kLocal);
}
inline Param P(const Buffer& b) { return Param{MakeVar(b->name + "_handle", DataType::Handle()), b}; }

inline Expr Div(Expr a, Expr b) { return Binary(BinaryOp::kFloorDiv, std::move(a), std::move(b)); }
inline Expr Mod(Expr a, Expr b) { return Binary(BinaryOp::kFloorMod, std::move(a), std::move(b)); }
inline Expr Lt(Expr a, Expr b) { return Binary(BinaryOp::kLT, std::move(a), std::move(b)); }
inline Expr Ge(Expr a, Expr b) { return Binary(BinaryOp::kGE, std::move(a), std::move(b)); }
inline Expr Eq(Expr a, Expr b) { return Binary(BinaryOp::kEQ, std::move(a), std::move(b)); }
inline Expr And(Expr a, Expr b) { return Binary(BinaryOp::kAnd, std::move(a), std::move(b)); }
inline Stmt Sync(int line = 0) { return Evaluate(Call(DataType::Void(), "tl.syncthreads", {}), L(line)); }
inline Stmt Void(const std::string& op, std::vector<Expr> args, int line = 0) {
  return Evaluate(Call(DataType::Void(), op, std::move(args)), L(line));
}
inline Stmt Unrolled(const Var& v, int64_t n, Stmt body) {
  return For(v, Int(0), Int(n), ForKind::kUnrolled, std::move(body));
}

/// A kernel launch: `body` may use `tx` (bound to tl.thread_idx) and the block vars.
struct Kernel {
  Var tx = MakeVar("tx");
  std::vector<Var> block = {MakeVar("bx"), MakeVar("by")};
  PrimFunc Make(std::vector<Param> params, std::vector<Expr> grid, int threads, std::vector<Buffer> allocs,
                Stmt body) const {
    std::vector<Var> bv(block.begin(), block.begin() + static_cast<long>(grid.size()));
    Stmt inner = Let(tx, Call(kI32, "tl.thread_idx", {}), std::move(body));
    auto k =
        std::make_shared<KernelNode>(std::move(grid), bv, std::vector<Expr>{Int(threads)}, std::move(allocs),
                                     std::vector<std::pair<Buffer, Expr>>{}, inner, Span{});
    return MakePrimFunc("kernel", std::move(params), k);
  }
};

inline int Count(const Result& r, const std::string& kind) {
  int n = 0;
  for (const auto& rep : r.reports) n += rep.kind == kind;
  return n;
}
inline std::string All(const Result& r) {
  std::string s;
  for (const auto& rep : r.reports) s += rep.message + "\n";
  return s;
}

// ------------------------------------------------------------------------------- numbers

}  // namespace emu_test
}  // namespace tl::emu
