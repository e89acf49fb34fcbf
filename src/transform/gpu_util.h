// Small helpers shared by the CUDA passes (internal to src/transform).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/index_expr.h"
#include "op/gemm.h"

namespace tl {
namespace gpu_pass {

using index_expr::C;
using index_expr::Div;
using index_expr::Mod;
inline Expr Eq(const Expr& a, const Expr& b) { return Binary(BinaryOp::kEQ, a, b); }
inline Expr Lt(const Expr& a, const Expr& b) { return Binary(BinaryOp::kLT, a, b); }
inline Expr And(const Expr& a, const Expr& b) { return a ? (b ? Binary(BinaryOp::kAnd, a, b) : a) : b; }
inline Stmt Call0(const std::string& op, std::vector<Expr> args, const Span& sp) {
  return Evaluate(Call(DataType::Void(), op, std::move(args)), sp);
}

inline bool IsFp8(DataType t) {
  return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2;
}
/// The input-type part of a tensor-core instruction's name for A and B dtypes (PTX ISA spelling):
/// "f16", "bf16", "s8" (mma.sync's signed 8-bit integers), or "<a>_<b>" for fp8 (e4m3 / e5m2, which mma and
/// wgmma let A and B mix) and, with `int8_pairs` (wgmma), for 8-bit integers (s8 / u8, mixed too).
// The PTX name of an operand type of the kind::f8f6f4 / kind::mxf8f6f4 MMAs ("" for any other type)
inline std::string F8F6F4Name(DataType t) {
  switch (t.code()) {
    case DataType::Code::kFloat8E4M3: return "e4m3";
    case DataType::Code::kFloat8E5M2: return "e5m2";
    case DataType::Code::kFloat6E3M2: return "e3m2";
    case DataType::Code::kFloat6E2M3: return "e2m3";
    case DataType::Code::kFloat4E2M1: return "e2m1";
    default: return "";
  }
}

inline std::string MmaAbName(DataType a, DataType b, bool int8_pairs = false) {
  if (IsFp8(a) && IsFp8(b)) {
    auto n = [](DataType t) { return t.code() == DataType::Code::kFloat8E4M3 ? "e4m3" : "e5m2"; };
    return std::string(n(a)) + "_" + n(b);
  }
  if ((a.is_int() || a.is_uint()) && a.bits() == 8) {
    if (!int8_pairs) return "s8";
    auto n = [](DataType t) { return t.is_uint() ? "u8" : "s8"; };
    return std::string(n(a)) + "_" + n(b);
  }
  return a == DataType::BFloat16() ? "bf16" : "f16";
}

inline std::vector<size_t> TileDims(const Region& r) {
  std::vector<size_t> d;
  for (size_t i = 0; i < r.ranges.size(); ++i)
    if (!IsConstInt(r.ranges[i].extent, 1)) d.push_back(i);
  return d;
}

inline int64_t ConstOr(const Expr& e, const Span& sp, const std::string& what) {
  int64_t v;
  if (!AsConstInt(Simplify(e), &v))
    throw UserError(ErrorKind::kUnsupported, what + " must be a compile-time constant on the CUDA target",
                    sp);
  return v;
}

/// A T.gemm's operand tiles: the non-unit dims of A and B (2 each) and K, checked to be a compile-time
/// constant that A and B agree on, in values (GemmNode::ValuesPerElement; every GPU gemm lowering starts with
/// this).
struct GemmTiles {
  std::vector<size_t> ad, bd;
  int64_t K;
};
inline GemmTiles GemmTilesOf(const GemmNode* g, const Span& sp) {
  GemmTiles t{TileDims(g->A), TileDims(g->B), 0};
  if (t.ad.size() != 2 || t.bd.size() != 2)
    throw UserError(ErrorKind::kType, "T.gemm operands must be 2-D tiles", sp);
  t.K = ConstOr(g->trans_A ? g->A.ranges[t.ad[0]].extent : g->A.ranges[t.ad[1]].extent, sp, "the gemm K") *
        g->ValuesPerElement(false);
  int64_t Kb =
      ConstOr(g->trans_B ? g->B.ranges[t.bd[1]].extent : g->B.ranges[t.bd[0]].extent, sp, "the gemm K") *
      g->ValuesPerElement(true);
  if (t.K != Kb) throw UserError(ErrorKind::kType, "T.gemm: A and B disagree on K", sp);
  return t;
}

/// The block's thread count (the product of T.Kernel's `threads`), which must be constant.
inline int64_t KernelThreads(const KernelNode* k) {
  int64_t T = 1;
  for (auto& t : k->threads) T *= ConstOr(t, k->span, "the thread count");
  return T;
}

inline std::string Loc(const Span& s) {
  return s.defined() ? s.file + ":" + std::to_string(s.line) : "<unknown>";
}

inline bool UsesVar(const Expr& e, const VarNode* v) {
  bool found = false;
  struct V : IRVisitor {
    const VarNode* v;
    bool* f;
    void VisitVar(const VarNode* n) override {
      if (n == v) *f = true;
    }
  } vis;
  vis.v = v;
  vis.f = &found;
  vis.VisitExpr(e);
  return found;
}
/// A block-wide barrier statement (`T.sync_threads()`, lowered as tl.syncthreads).
inline bool IsBarrier(const Stmt& s) {
  auto* e = As<EvaluateNode>(s);
  auto* c = e ? As<CallNode>(e->value) : nullptr;
  return c && c->op == "tl.syncthreads";
}

/// A named barrier among part of the block (`T.sync_threads(id, count)`: tl.named_barrier_sync, bar.sync id, count).
inline bool IsNamedBarrier(const Stmt& s) {
  auto* e = As<EvaluateNode>(s);
  auto* c = e ? As<CallNode>(e->value) : nullptr;
  return c && c->op == "tl.named_barrier_sync";
}

/// Whether threads may evaluate `e` differently by reading the thread index (or an OpenCL sub-group id) or a
/// var in `tainted` (let-bound to such a value).
inline bool ThreadDependent(const Expr& e, const std::set<const VarNode*>& tainted) {
  bool found = false;
  struct V : IRVisitor {
    const std::set<const VarNode*>* s;
    bool* f;
    void VisitVar(const VarNode* v) override {
      if (s->count(v)) *f = true;
    }
    void VisitCall(const CallNode* c) override {
      if (c->op == "tl.thread_idx" || c->op == "tl.subgroup_id" || c->op == "tl.subgroup_local_id") *f = true;
      IRVisitor::VisitCall(c);
    }
  } vis;
  vis.s = &tainted;
  vis.f = &found;
  vis.VisitExpr(e);
  return found;
}

inline bool ReadsMemory(const Expr& e) {
  bool found = false;
  struct V : IRVisitor {
    bool* f;
    void VisitLoad(const BufferLoadNode*) override { *f = true; }
  } vis;
  vis.f = &found;
  vis.VisitExpr(e);
  return found;
}

}  // namespace gpu_pass
}  // namespace tl
