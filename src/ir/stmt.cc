// Statement constructors.
#include <algorithm>
#include "ir/stmt.h"
#include "ir/function.h"

namespace tl {

const char* ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "Parallel";
    case ForKind::kPipelined: return "Pipelined";
    case ForKind::kUnrolled: return "unroll";
    case ForKind::kVectorized: return "vectorized";
  }
  return "?";
}

Region Region::Full(const Buffer& b) {
  Region r{b, {}};
  for (const Expr& e : b->shape) r.ranges.push_back({Int(0), e});
  return r;
}

bool Region::IsWhole() const {
  if (ranges.size() != buffer->shape.size()) return false;
  for (size_t i = 0; i < ranges.size(); ++i) {
    int64_t ext = 0, dim = -1;
    if (!IsConstInt(ranges[i].min, 0) || !AsConstInt(ranges[i].extent, &ext) || !AsConstInt(buffer->shape[i], &dim) ||
        ext != dim)
      return false;
  }
  return true;
}

Stmt Store(Buffer b, Expr v, std::vector<Expr> idx, Span s) {
  return std::make_shared<StoreNode>(std::move(b), std::move(v), std::move(idx), std::move(s));
}
Stmt Evaluate(Expr v, Span s) { return std::make_shared<EvaluateNode>(std::move(v), std::move(s)); }
Stmt Let(Var v, Expr x, Stmt body, Span s) {
  return std::make_shared<LetNode>(std::move(v), std::move(x), std::move(body), std::move(s));
}
Stmt For(Var v, Expr mn, Expr ext, ForKind k, Stmt body, std::map<std::string, Expr> ann, Span s) {
  return std::make_shared<ForNode>(std::move(v), std::move(mn), std::move(ext), k, std::move(body),
                                   std::move(ann), std::move(s));
}
Stmt If(Expr c, Stmt t, Stmt e, Span s) {
  return std::make_shared<IfNode>(std::move(c), std::move(t), std::move(e), std::move(s));
}
Stmt While(Expr c, Stmt body, Span s) {
  return std::make_shared<WhileNode>(std::move(c), std::move(body), std::move(s));
}
Stmt AttrStmt(Buffer node, std::string key, Expr value, Stmt body, Span s) {
  return std::make_shared<AttrStmtNode>(std::move(node), std::move(key), std::move(value), std::move(body),
                                        std::move(s));
}
Expr FindAttr(const Stmt& s, const std::string& key, const BufferNode* node) {
  for (Stmt cur = s; cur;) {
    if (auto* a = As<AttrStmtNode>(cur)) {
      if (a->key == key && a->node.get() == node) return a->value;
      cur = a->body;
    } else {
      break;
    }
  }
  return nullptr;
}
Stmt StripAttrs(const Stmt& s, const std::string& key) {
  auto* a = As<AttrStmtNode>(s);
  if (!a) return s;
  Stmt b = StripAttrs(a->body, key);
  if (a->key == key) return b;
  return b == a->body ? s : AttrStmt(a->node, a->key, a->value, b, a->span);
}

Stmt Seq(std::vector<Stmt> v, Span s) {
  std::vector<Stmt> flat;
  for (auto& st : v) {
    if (!st) continue;
    if (auto* q = As<SeqNode>(st)) {
      for (auto& x : q->seq) flat.push_back(x);
    } else {
      flat.push_back(std::move(st));
    }
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<SeqNode>(std::move(flat), std::move(s));
}

const KernelNode* FindKernel(const Stmt& s) {
  if (auto* k = As<KernelNode>(s)) return k;
  if (auto* l = As<LetNode>(s)) return FindKernel(l->body);
  if (auto* a = As<AttrStmtNode>(s)) return FindKernel(a->body);
  if (auto* q = As<SeqNode>(s))
    for (auto& x : q->seq)
      if (auto* k = FindKernel(x)) return k;
  return nullptr;
}

namespace {
int CountKernels(const Stmt& s) {
  if (!s) return 0;
  if (As<KernelNode>(s)) return 1;
  if (auto* l = As<LetNode>(s)) return CountKernels(l->body);
  if (auto* a = As<AttrStmtNode>(s)) return CountKernels(a->body);
  int n = 0;
  if (auto* q = As<SeqNode>(s))
    for (auto& x : q->seq) n += CountKernels(x);
  return n;
}

// `s` with only its `which`-th kernel (counting from *seen); null where nothing of it is left.
Stmt KeepKernel(const Stmt& s, int which, int* seen) {
  if (As<KernelNode>(s)) return (*seen)++ == which ? s : nullptr;
  if (auto* l = As<LetNode>(s)) {
    Stmt b = KeepKernel(l->body, which, seen);
    return b ? Let(l->var, l->value, b, l->span) : nullptr;
  }
  if (auto* a = As<AttrStmtNode>(s)) {
    Stmt b = KeepKernel(a->body, which, seen);
    return b ? AttrStmt(a->node, a->key, a->value, b, a->span) : nullptr;
  }
  if (auto* q = As<SeqNode>(s)) {
    std::vector<Stmt> kept;
    for (auto& x : q->seq)
      if (CountKernels(x) > 0) kept.push_back(KeepKernel(x, which, seen));
      else kept.push_back(x);  // statements around the kernels stay in every part
    bool any = std::any_of(kept.begin(), kept.end(), [](const Stmt& x) { return x && CountKernels(x) > 0; });
    return any ? Seq(std::move(kept), q->span) : nullptr;
  }
  return s;
}
}  // namespace

std::vector<PrimFunc> SplitKernels(const PrimFunc& f) {
  int n = CountKernels(f->body);
  if (n <= 1) return {f};
  std::vector<PrimFunc> out;
  for (int i = 0; i < n; ++i) {
    int seen = 0;
    out.push_back(MakePrimFunc(f->name + "_kernel" + std::to_string(i), f->params, KeepKernel(f->body, i, &seen),
                               f->attrs, f->span));
  }
  return out;
}

namespace {
std::map<std::string, TileOpFactory>& TileOpFactories() {
  static std::map<std::string, TileOpFactory> f;
  return f;
}
}  // namespace

void RegisterTileOp(const std::string& name, TileOpFactory factory) {
  TileOpFactories()[name] = std::move(factory);
}

std::vector<std::string> TileOpNames() {
  std::vector<std::string> out;
  for (auto& [k, v] : TileOpFactories()) out.push_back(k);
  return out;
}

Stmt MakeTileOp(const std::string& name, std::vector<Region> regions, std::vector<Expr> exprs,
                const std::map<std::string, int64_t>& attrs, Span span) {
  auto it = TileOpFactories().find(name);
  if (it == TileOpFactories().end()) throw InternalError("no tile op named '" + name + "' is registered");
  Stmt s = it->second(std::move(regions), std::move(exprs), attrs, std::move(span));
  As<TileOpNode>(s)->Check();
  return s;
}

}  // namespace tl
