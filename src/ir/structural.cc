// Structural equality and hashing. Both walk the IR in the same fixed order; a var or buffer is
// identified by the order in which it is first met, which makes both alpha-invariant and
// consistent with each other (equal implies equal hash).
#include "ir/structural.h"

#include <cstring>
#include <unordered_map>

namespace tl {
namespace {

// Walks one IR tree and feeds a canonical token stream to a sink. Equality compares the token
// streams of two trees; hashing folds one stream. Sharing the walk keeps the two consistent.
class Tokenizer {
 public:
  Tokenizer(std::vector<uint64_t>* out, bool map_free) : out_(out), map_free_(map_free) {}

  void Tok(uint64_t t) { out_->push_back(t); }
  void Str(const std::string& s) {
    Tok(s.size());
    for (char c : s) Tok(static_cast<unsigned char>(c));
  }
  void Type(const DataType& t) { Tok((uint64_t(t.code()) << 32) | (uint64_t(t.bits()) << 16) | t.lanes()); }
  // A definition site (parameter, loop var, let, allocation) numbers the var or buffer; a use
  // refers to that number. Free vars are numbered at first use when map_free_ is set, else they
  // are compared by identity.
  void Def(const void* p) { ids_.emplace(p, ids_.size()); }
  void Id(const void* p, int tag) {
    auto it = ids_.find(p);
    Tok(0xA000 + tag);
    if (it == ids_.end()) {
      if (!map_free_) {
        Tok(0xF7EE);
        Tok(reinterpret_cast<uintptr_t>(p));
        return;
      }
      it = ids_.emplace(p, ids_.size()).first;
    }
    Tok(it->second);
  }
  void DefVar(const Var& v) {
    Def(v.get());
    E(v);
  }
  void BufferRef(const Buffer& b, bool def = false) {
    bool first = !ids_.count(b.get()) && (def || map_free_);
    if (def) Def(b.get());
    Id(b.get(), 1);
    if (first) {  // a buffer's definition: its type, scope and shape
      Type(b->dtype);
      Tok(uint64_t(b->scope));
      Tok(b->shape.size());
      for (auto& d : b->shape) E(d);
      Tok(b->data ? 1 : 0);
      if (b->data) {
        BufferRef(b->data);
        Tok(static_cast<uint64_t>(b->byte_offset));
      }
    }
  }

  void E(const Expr& e) {
    if (!e) {
      Tok(0xDEAD);
      return;
    }
    Tok(uint64_t(e->kind) + 100);
    Type(e->dtype);
    switch (e->kind) {
      case ExprKind::kIntImm:
        Tok(static_cast<uint64_t>(static_cast<const IntImmNode*>(e.get())->value));
        break;
      case ExprKind::kFloatImm: {
        double d = static_cast<const FloatImmNode*>(e.get())->value;
        uint64_t u;
        std::memcpy(&u, &d, 8);
        Tok(u);
        break;
      }
      case ExprKind::kStringImm: Str(static_cast<const StringImmNode*>(e.get())->value); break;
      case ExprKind::kVar: Id(e.get(), 0); break;
      case ExprKind::kBinary: {
        auto* b = static_cast<const BinaryNode*>(e.get());
        Tok(uint64_t(b->op));
        E(b->a);
        E(b->b);
        break;
      }
      case ExprKind::kNot: E(static_cast<const NotNode*>(e.get())->a); break;
      case ExprKind::kCast: E(static_cast<const CastNode*>(e.get())->value); break;
      case ExprKind::kSelect: {
        auto* s = static_cast<const SelectNode*>(e.get());
        E(s->cond);
        E(s->true_value);
        E(s->false_value);
        break;
      }
      case ExprKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        Str(c->op);
        Tok(c->args.size());
        for (auto& a : c->args) E(a);
        break;
      }
      case ExprKind::kBufferLoad: {
        auto* l = static_cast<const BufferLoadNode*>(e.get());
        BufferRef(l->buffer);
        Tok(l->indices.size());
        for (auto& i : l->indices) E(i);
        break;
      }
    }
  }

  void R(const Region& r) {
    BufferRef(r.buffer);
    Tok(r.ranges.size());
    for (auto& rg : r.ranges) {
      E(rg.min);
      E(rg.extent);
    }
  }

  void S(const Stmt& s) {
    if (!s) {
      Tok(0xBEEF);
      return;
    }
    Tok(uint64_t(s->kind) + 200);
    switch (s->kind) {
      case StmtKind::kStore: {
        auto* n = As<StoreNode>(s);
        BufferRef(n->buffer);
        E(n->value);
        Tok(n->indices.size());
        for (auto& i : n->indices) E(i);
        break;
      }
      case StmtKind::kEvaluate: E(As<EvaluateNode>(s)->value); break;
      case StmtKind::kLet: {
        auto* n = As<LetNode>(s);
        E(n->value);
        DefVar(n->var);
        S(n->body);
        break;
      }
      case StmtKind::kFor: {
        auto* n = As<ForNode>(s);
        DefVar(n->var);
        E(n->min);
        E(n->extent);
        Tok(uint64_t(n->for_kind));
        Tok(n->annotations.size());
        for (auto& kv : n->annotations) {
          Str(kv.first);
          E(kv.second);
        }
        S(n->body);
        break;
      }
      case StmtKind::kIf: {
        auto* n = As<IfNode>(s);
        E(n->cond);
        S(n->then_case);
        S(n->else_case);
        break;
      }
      case StmtKind::kWhile: {
        auto* n = As<WhileNode>(s);
        E(n->cond);
        S(n->body);
        break;
      }
      case StmtKind::kSeq: {
        auto* n = As<SeqNode>(s);
        Tok(n->seq.size());
        for (auto& x : n->seq) S(x);
        break;
      }
      case StmtKind::kKernel: {
        auto* n = As<KernelNode>(s);
        Tok(n->grid.size());
        for (auto& g : n->grid) E(g);
        for (auto& v : n->block_vars) DefVar(v);
        Tok(n->threads.size());
        for (auto& t : n->threads) E(t);
        Tok(n->alloc_buffers.size());
        for (auto& b : n->alloc_buffers) BufferRef(b, true);
        Tok(n->var_inits.size());
        for (auto& kv : n->var_inits) {
          BufferRef(kv.first);
          E(kv.second);
        }
        S(n->body);
        break;
      }
      case StmtKind::kAttr: {
        auto* n = As<AttrStmtNode>(s);
        Tok(n->node ? 1 : 0);
        if (n->node) BufferRef(n->node);
        Str(n->key);
        E(n->value);
        S(n->body);
        break;
      }
      case StmtKind::kTileOp: {
        auto* n = As<TileOpNode>(s);
        Str(n->op);
        auto attrs = n->Attrs();
        Tok(attrs.size());
        for (int64_t v : attrs) Tok(static_cast<uint64_t>(v));
        auto regions = n->Regions();
        Tok(regions.size());
        for (auto& [r, access] : regions) R(*r);
        auto exprs = n->Exprs();
        Tok(exprs.size());
        for (auto& e : exprs) E(e);
        break;
      }
    }
  }

  void F(const PrimFunc& f) {
    Tok(f->params.size());
    for (auto& p : f->params) {
      if (p.buffer) {
        Tok(1);
        Def(p.var.get());
        BufferRef(p.buffer, true);
      } else {
        Tok(2);
        DefVar(p.var);
      }
    }
    S(f->body);
    Tok(f->attrs.size());  // attrs (layouts, shared-memory offsets, ...) are part of the function
    for (auto& kv : f->attrs) {
      Str(kv.first);
      Str(kv.second);
    }
  }

 private:
  std::vector<uint64_t>* out_;
  bool map_free_;
  std::unordered_map<const void*, uint64_t> ids_;
};

uint64_t Fold(const std::vector<uint64_t>& toks) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint64_t t : toks) {
    h ^= t + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0x100000001b3ULL;
  }
  return h;
}

template <typename T, typename Fn>
std::vector<uint64_t> Tokens(const T& x, Fn fn, bool map_free) {
  std::vector<uint64_t> out;
  Tokenizer t(&out, map_free);
  fn(t, x);
  return out;
}
auto kF = [](Tokenizer& t, const PrimFunc& f) { t.F(f); };
auto kS = [](Tokenizer& t, const Stmt& s) { t.S(s); };
auto kE = [](Tokenizer& t, const Expr& e) { t.E(e); };

}  // namespace

// Symbolic shape vars of a function are free in its body but defined by its signature, so whole
// functions map free vars; standalone statements and expressions compare free vars by identity.
bool StructuralEqual(const PrimFunc& a, const PrimFunc& b) {
  return Tokens(a, kF, true) == Tokens(b, kF, true);
}
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars) {
  return Tokens(a, kS, map_free_vars) == Tokens(b, kS, map_free_vars);
}
bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars) {
  return Tokens(a, kE, map_free_vars) == Tokens(b, kE, map_free_vars);
}
uint64_t StructuralHash(const PrimFunc& f) { return Fold(Tokens(f, kF, true)); }
uint64_t StructuralHash(const Stmt& s, bool map_free_vars) { return Fold(Tokens(s, kS, map_free_vars)); }
uint64_t StructuralHash(const Expr& e, bool map_free_vars) { return Fold(Tokens(e, kE, map_free_vars)); }

}  // namespace tl
