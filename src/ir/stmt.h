// Statements of the IR: structured control flow, the kernel launch scope, and the tile
// operations (copy, gemm, fill, reduce, atomic_add, cumsum) as first-class nodes.
#pragma once
#include <map>
#include <optional>

#include "ir/expr.h"

namespace tl {

enum class StmtKind : uint8_t {
  kStore, kEvaluate, kLet, kFor, kIf, kSeq, kKernel, kAttr,
  kCopy, kGemm, kFill, kReduce, kAtomicAdd, kCumsum
};

struct StmtNode {
  StmtNode(StmtKind k, Span s) : kind(k), span(std::move(s)) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
  const Span span;
};
using Stmt = std::shared_ptr<const StmtNode>;

template <typename T>
const T* As(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

struct Range {
  Expr min, extent;
};
/// A rectangular part of a buffer: one Range per dimension.
struct Region {
  Buffer buffer;
  std::vector<Range> ranges;
  /// The whole buffer.
  static Region Full(const Buffer& b);
};

struct StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  StoreNode(Buffer b, Expr v, std::vector<Expr> i, Span s)
      : StmtNode(kKind, std::move(s)), buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
  const Buffer buffer;
  const Expr value;
  const std::vector<Expr> indices;
};
struct EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  EvaluateNode(Expr v, Span s) : StmtNode(kKind, std::move(s)), value(std::move(v)) {}
  const Expr value;
};
/// `var = value` visible in body; the value is computed once.
struct LetNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLet;
  LetNode(Var v, Expr x, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)), var(std::move(v)), value(std::move(x)), body(std::move(b)) {}
  const Var var;
  const Expr value;
  const Stmt body;
};

enum class ForKind : uint8_t { kSerial, kParallel, kPipelined, kUnrolled, kVectorized };
const char* ForKindName(ForKind k);

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  ForNode(Var v, Expr mn, Expr ext, ForKind k, Stmt b, std::map<std::string, Expr> ann, Span s)
      : StmtNode(kKind, std::move(s)), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)),
        for_kind(k), body(std::move(b)), annotations(std::move(ann)) {}
  const Var var;
  const Expr min, extent;
  const ForKind for_kind;
  const Stmt body;
  const std::map<std::string, Expr> annotations;  // e.g. num_stages for kPipelined
};
struct IfNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIf;
  IfNode(Expr c, Stmt t, Stmt e, Span s)
      : StmtNode(kKind, std::move(s)), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be null
};
struct SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  SeqNode(std::vector<Stmt> v, Span s) : StmtNode(kKind, std::move(s)), seq(std::move(v)) {}
  const std::vector<Stmt> seq;
};
/// `with T.Kernel(grid..., threads=...) as (bx, ...)`: the body runs once per block; the
/// buffers allocated inside (shared, fragment, local) live for the block's lifetime.
struct KernelNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kKernel;
  KernelNode(std::vector<Expr> g, std::vector<Var> bv, std::vector<Expr> t, std::vector<Buffer> al,
             std::vector<std::pair<Buffer, Expr>> init, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)), grid(std::move(g)), block_vars(std::move(bv)), threads(std::move(t)),
        alloc_buffers(std::move(al)), var_inits(std::move(init)), body(std::move(b)) {}
  const std::vector<Expr> grid;
  const std::vector<Var> block_vars;
  const std::vector<Expr> threads;
  const std::vector<Buffer> alloc_buffers;
  const std::vector<std::pair<Buffer, Expr>> var_inits;  // T.alloc_var(dtype, init=...)
  const Stmt body;
};

/// `with T.attr(node, key, value): body` — a fact one pass records for later ones, attached to a
/// buffer (`node`, may be null) and scoped to `body`. Keys in use (docs/thread_ir.md):
///   tl.layout          node: fragment buffer, value: its Fragment (T.fragment(...)); on the kernel body
///   tl.num_stages      node: shared buffer filled by a pipelined async copy, value: its stage count
///   tl.shared_tile     node: flattened shared buffer, value: T.list(stages, tile dims...); on the kernel body
///   tl.copy_async      node: null, value: 1; wraps a global->shared T.copy that lowers to cp.async
///   tl.pipeline_managed node: shared buffer whose ordering a pipelined loop's waits provide; wraps the loop
///   tl.tile_op         node: null, value: the op's ordinal; wraps the thread-level statements of one tile op
struct AttrStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAttr;
  AttrStmtNode(Buffer n, std::string k, Expr v, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)), node(std::move(n)), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
  const Buffer node;  // may be null
  const std::string key;
  const Expr value;
  const Stmt body;
};

struct CopyNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kCopy;
  CopyNode(Region s, Region d, bool no_tma, Span sp)
      : StmtNode(kKind, std::move(sp)), src(std::move(s)), dst(std::move(d)), disable_tma(no_tma) {}
  const Region src, dst;
  const bool disable_tma;
};

enum class GemmWarpPolicy : uint8_t { kSquare, kFullRow, kFullCol };
struct GemmNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kGemm;
  GemmNode(Region a, Region b, Region c, bool ta, bool tb, GemmWarpPolicy p, bool clear, int kp, Span s)
      : StmtNode(kKind, std::move(s)), A(std::move(a)), B(std::move(b)), C(std::move(c)), trans_A(ta),
        trans_B(tb), policy(p), clear_accum(clear), k_pack(kp) {}
  const Region A, B, C;
  const bool trans_A, trans_B;
  const GemmWarpPolicy policy;
  const bool clear_accum;
  const int k_pack;
};
struct FillNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFill;
  FillNode(Region d, Expr v, Span s) : StmtNode(kKind, std::move(s)), dst(std::move(d)), value(std::move(v)) {}
  const Region dst;
  const Expr value;
};

enum class ReduceKind : uint8_t { kSum, kMax, kMin, kAbsSum, kAbsMax };
const char* ReduceKindName(ReduceKind k);
struct ReduceNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kReduce;
  ReduceNode(ReduceKind k, Region s, Region d, int dm, bool c, Span sp)
      : StmtNode(kKind, std::move(sp)), reduce_kind(k), src(std::move(s)), dst(std::move(d)), dim(dm), clear(c) {}
  const ReduceKind reduce_kind;
  const Region src, dst;
  const int dim;  // normalised to be non-negative
  const bool clear;
};
/// dst += src (a tile), or dst[point] += value (a scalar), atomically with respect to other blocks.
struct AtomicAddNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAtomicAdd;
  AtomicAddNode(Region d, std::optional<Region> s, Expr v, Span sp)
      : StmtNode(kKind, std::move(sp)), dst(std::move(d)), src(std::move(s)), value(std::move(v)) {}
  const Region dst;
  const std::optional<Region> src;
  const Expr value;  // set when src is empty
};
struct CumsumNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kCumsum;
  CumsumNode(Region s, Region d, int dm, bool r, Span sp)
      : StmtNode(kKind, std::move(sp)), src(std::move(s)), dst(std::move(d)), dim(dm), reverse(r) {}
  const Region src, dst;
  const int dim;
  const bool reverse;
};

// ---- constructors ---------------------------------------------------------------------------
Stmt Store(Buffer b, Expr v, std::vector<Expr> idx, Span s = {});
Stmt Evaluate(Expr v, Span s = {});
Stmt Let(Var v, Expr x, Stmt body, Span s = {});
Stmt For(Var v, Expr mn, Expr ext, ForKind k, Stmt body, std::map<std::string, Expr> ann = {}, Span s = {});
Stmt If(Expr c, Stmt t, Stmt e = nullptr, Span s = {});
Stmt AttrStmt(Buffer node, std::string key, Expr value, Stmt body, Span s = {});
/// The attribute `key` on `node` among the AttrStmts directly wrapping `s` (under lets too); null if absent.
Expr FindAttr(const Stmt& s, const std::string& key, const BufferNode* node = nullptr);
/// `s` without the AttrStmts of `key` that wrap it directly.
Stmt StripAttrs(const Stmt& s, const std::string& key);
/// Flattens nested sequences and drops null entries; a single statement is returned as is.
Stmt Seq(std::vector<Stmt> v, Span s = {});
/// The T.Kernel scope of a function body (under lets and sequences); null when there is none.
const KernelNode* FindKernel(const Stmt& body);

}  // namespace tl
