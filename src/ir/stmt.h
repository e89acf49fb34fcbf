// Statements of the IR: structured control flow, the kernel launch scope, and the tile operations
// as first-class nodes. A tile op is a TileOpNode subclass defined in its own file (src/op/<op>.h,
// listed in src/op/ops.h): it owns its semantic check, how it accesses its operands, how it prints
// and how it is rebuilt, so the visitor, mutator, structural equality and printer handle every op
// through this one interface.
#pragma once
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace tl {

enum class StmtKind : uint8_t {
  kStore,
  kEvaluate,
  kLet,
  kFor,
  kIf,
  kSeq,
  kKernel,
  kAttr,
  kWhile,
  kTileOp  // every tile operation; TileOpNode::op says which
};

struct StmtNode {
  StmtNode(StmtKind k, Span s) : kind(k), span(std::move(s)) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
  const Span span;
};
using Stmt = std::shared_ptr<const StmtNode>;

struct TileOpNode;

/// The node as a T, or null: for tile ops, T is the op's class (As<CopyNode>) or TileOpNode.
template <typename T>
const T* As(const StmtNode* s);
template <typename T>
const T* As(const Stmt& s) {
  return As<T>(s.get());
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
  /// The region is its whole buffer, of constant shape (every range from 0 over the dimension's extent).
  bool IsWhole() const;
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
      : StmtNode(kKind, std::move(s)),
        var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        body(std::move(b)),
        annotations(std::move(ann)) {}
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
/// `while cond: body` on a run-time condition, re-evaluated before every iteration.
struct WhileNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kWhile;
  WhileNode(Expr c, Stmt b, Span s) : StmtNode(kKind, std::move(s)), cond(std::move(c)), body(std::move(b)) {}
  const Expr cond;
  const Stmt body;
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
      : StmtNode(kKind, std::move(s)),
        grid(std::move(g)),
        block_vars(std::move(bv)),
        threads(std::move(t)),
        alloc_buffers(std::move(al)),
        var_inits(std::move(init)),
        body(std::move(b)) {}
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
///   tl.tmem_unpacked   node: tensor-memory buffer, value: 1 (16-bit values one a 32-bit column); on the
///   kernel body, read by the CUDA backend's LowerTensorMemoryCUDA tl.shared_tile     node: flattened shared
///   buffer, value: T.list(stages, tile dims...); on the kernel body tl.copy_async      node: null, value: 1;
///   wraps a global->shared T.copy that lowers to cp.async tl.pipeline_managed node: shared buffer whose
///   ordering a pipelined loop's waits provide; wraps the loop tl.tile_op         node: null, value: the op's
///   ordinal; wraps the thread-level statements of one tile op
struct AttrStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAttr;
  AttrStmtNode(Buffer n, std::string k, Expr v, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)),
        node(std::move(n)),
        key(std::move(k)),
        value(std::move(v)),
        body(std::move(b)) {}
  const Buffer node;  // may be null
  const std::string key;
  const Expr value;
  const Stmt body;
};

/// How a tile op accesses an operand region (barrier, liveness and written-parameter analyses).
enum class Access : uint8_t { kRead, kWrite, kReadWrite };

/// A positional argument of the DSL call that rebuilds a tile op (the printer's view).
struct TileOpArg {
  enum Kind : uint8_t { kRegion, kPoint, kExpr } kind;  // kPoint: one element, printed buf[i, j]
  const Region* region = nullptr;
  Expr expr;
};

/// The DSL call that rebuilds a tile op: T.<fn>(args..., key=value...), keywords only when not default.
struct TileOpCall {
  std::string fn;
  std::vector<TileOpArg> args;
  std::vector<std::pair<std::string, std::string>> keywords;
};

struct TileOpNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kTileOp;
  /// `op` is the op class's kOp: its name, which identifies it.
  TileOpNode(const char* op_name, Span s) : StmtNode(kKind, std::move(s)), op(op_name) {}
  const char* const op;

  /// The operand regions, in a fixed order, with how the op accesses each.
  virtual std::vector<std::pair<const Region*, Access>> Regions() const = 0;
  /// The expression operands (a fill value, an atomic increment), in a fixed order.
  virtual std::vector<Expr> Exprs() const { return {}; }
  /// The same op over new operands (given in the orders of Regions() and Exprs()).
  virtual Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const = 0;
  /// Every field that is not an operand, as integers (structural equality and hashing).
  virtual std::vector<int64_t> Attrs() const { return {}; }
  virtual TileOpCall Call() const = 0;
  /// Shared operands the op reads as plain row-major memory, whatever the target's swizzle (tensor-memory copies
  /// of 16-byte rows in order): they are laid out row-major, and TMA copies into them take no swizzle.
  virtual std::vector<const Region*> RowMajorShared() const { return {}; }
  /// Tensor-memory regions the op writes one 16-bit value a 32-bit column (bits 0-15; a float16 MMA
  /// accumulator), where a 16-bit tensor-memory buffer otherwise packs two values a column.
  virtual std::vector<const Region*> UnpackedTensorMemory() const { return {}; }
  /// Work the threads that reach it do without a barrier of the threads it is lowered for: issued by one thread
  /// (a TMA copy, a tcgen05 MMA, its commit or scale copy), by one warp (a scale-factor transpose), per warp group
  /// (a wgmma wait) or per thread (a scalar atomic). A branch holding only such work needs no region of its own.
  virtual bool SelfContained() const { return false; }
  /// The op's semantic check (scopes, dtypes, shapes), run when the front end builds it: a
  /// UserError(kType) at the op's span. What one target cannot do is its lowering's to report.
  virtual void Check() const {}
};

/// Builds a tile op by its DSL name from the front end's arguments -- operand regions, expression
/// operands and integer attributes by keyword -- and runs its Check(). Each op registers its factory
/// in its own file (a TileOpRegistrar), so the bindings have no per-op code.
using TileOpFactory = std::function<Stmt(std::vector<Region> regions, std::vector<Expr> exprs,
                                         const std::map<std::string, int64_t>& attrs, Span span)>;
void RegisterTileOp(const std::string& name, TileOpFactory factory);
Stmt MakeTileOp(const std::string& name, std::vector<Region> regions, std::vector<Expr> exprs,
                const std::map<std::string, int64_t>& attrs, Span span);
/// The names MakeTileOp knows, sorted.
std::vector<std::string> TileOpNames();
struct TileOpRegistrar {
  TileOpRegistrar(const std::string& name, TileOpFactory factory) {
    RegisterTileOp(name, std::move(factory));
  }
};

template <typename T>
const T* As(const StmtNode* s) {
  if constexpr (std::is_same_v<T, TileOpNode>) {
    return s && s->kind == StmtKind::kTileOp ? static_cast<const TileOpNode*>(s) : nullptr;
  } else if constexpr (std::is_base_of_v<TileOpNode, T>) {
    // by name, not by the address of kOp: the nodes cross shared libraries (the Python extension)
    return s && s->kind == StmtKind::kTileOp &&
                   std::strcmp(static_cast<const TileOpNode*>(s)->op, T::kOp) == 0
               ? static_cast<const T*>(s)
               : nullptr;
  } else {
    return s && s->kind == T::kKind ? static_cast<const T*>(s) : nullptr;
  }
}

// ---- constructors ---------------------------------------------------------------------------
Stmt Store(Buffer b, Expr v, std::vector<Expr> idx, Span s = {});
Stmt Evaluate(Expr v, Span s = {});
Stmt Let(Var v, Expr x, Stmt body, Span s = {});
Stmt For(Var v, Expr mn, Expr ext, ForKind k, Stmt body, std::map<std::string, Expr> ann = {}, Span s = {});
Stmt If(Expr c, Stmt t, Stmt e = nullptr, Span s = {});
Stmt While(Expr c, Stmt body, Span s = {});
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

// The tile ops (each in its own file).
#include "op/ops.h"
