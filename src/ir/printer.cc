// IR printer in TileLang DSL syntax. Distinct vars that share a name get a numeric suffix so
// the printed text re-parses to a structurally equal function.
#include "ir/printer.h"

#include "ir/name_table.h"

#include <cmath>
#include <initializer_list>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ir/functor.h"

namespace tl {
namespace {

// `x ^ -1` (all ones) is how the IR holds `~x`.
bool IsBitNot(const BinaryNode* b) {
  int64_t v;
  return b->op == BinaryOp::kBitXor && b->dtype.is_integer() && AsConstInt(b->b, &v) &&
         v == static_cast<const IntImmNode*>(AllOnes(b->dtype).get())->value;
}

// Python's precedence: or < and < not < comparisons < | < ^ < & < shifts < + - < * / // % < ~.
int Precedence(const Expr& e) {
  if (e->kind == ExprKind::kNot) return 3;  // Python's `not` binds between `and` and comparisons
  auto* b = As<BinaryNode>(e);
  if (!b) return 100;
  switch (b->op) {
    case BinaryOp::kOr: return 1;
    case BinaryOp::kAnd: return 2;
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE: return 4;
    case BinaryOp::kBitOr: return 5;
    case BinaryOp::kBitXor: return IsBitNot(b) ? 11 : 6;
    case BinaryOp::kBitAnd: return 7;
    case BinaryOp::kShl:
    case BinaryOp::kShr: return 8;
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return 9;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod: return 10;
    default: return 100;  // printed as calls
  }
}

// Calls the front end spells `T.<op>(...)` and rebuilds with the same type; every other call
// (builtins of the lower IR, layout values, print/assert) prints as T.call_intrin(dtype, op, args...).
bool FrontEndCall(const std::string& op) {
  static const std::set<std::string> ops = {"exp",  "exp2",    "log", "log2",  "log10",    "sqrt",  "rsqrt",
                                            "tanh", "sigmoid", "erf", "floor", "ceil",     "round", "sin",
                                            "cos",  "trunc",   "abs", "pow",   "popcount", "clz"};
  return ops.count(op) > 0;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

class Printer {
 public:
  std::string Name(const void* key, const std::string& base) { return names_.Get(key, base); }
  std::string VarName(const VarNode* v) { return Name(v, v->name); }
  std::string BufName(const Buffer& b) { return Name(b.get(), b->name); }
  // Names are handed out on first print, so pieces that print vars or buffers must be printed
  // left to right: the order of evaluation of the operands of `a + b` is unspecified, that of the
  // elements of a braced list is left to right.
  static std::string Cat(std::initializer_list<std::string> parts) {
    std::string s;
    for (const auto& p : parts) s += p;
    return s;
  }

  std::string Lit(const Expr& e) {
    std::ostringstream os;
    if (auto* i = As<IntImmNode>(e)) {
      if (e->dtype.is_bool()) return i->value ? "True" : "False";
      if (e->dtype == DataType::Int(32)) {
        os << i->value;
      } else {
        os << "T." << e->dtype.str() << "(" << i->value << ")";
      }
      return os.str();
    }
    auto* f = As<FloatImmNode>(e);
    std::string v;
    if (std::isinf(f->value)) v = f->value > 0 ? "T.infinity(\"" : "-T.infinity(\"";
    if (!v.empty()) return v + e->dtype.str() + "\")";
    if (std::isnan(f->value)) return "T.nan(\"" + e->dtype.str() + "\")";
    os << std::setprecision(std::numeric_limits<double>::max_digits10) << f->value;
    v = os.str();
    if (v.find_first_of(".en") == std::string::npos) v += ".0";
    if (e->dtype == DataType::Float(32)) return v;
    return "T." + e->dtype.str() + "(" + v + ")";
  }

  std::string E(const Expr& e) {
    switch (e->kind) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm: return Lit(e);
      case ExprKind::kStringImm: {
        std::string s = "\"";
        for (char c : static_cast<const StringImmNode*>(e.get())->value) {
          if (c == '"' || c == '\\') s += '\\';
          s += c;
        }
        return s + "\"";
      }
      case ExprKind::kVar: return VarName(static_cast<const VarNode*>(e.get()));
      case ExprKind::kBinary: {
        auto* b = static_cast<const BinaryNode*>(e.get());
        const char* fn = nullptr;
        switch (b->op) {
          case BinaryOp::kMin: fn = "T.min"; break;
          case BinaryOp::kMax: fn = "T.max"; break;
          case BinaryOp::kMod: fn = "T.truncmod"; break;
          default: break;
        }
        if (b->op == BinaryOp::kDiv && e->dtype.is_integer()) fn = "T.truncdiv";
        if (fn) return Cat({fn, "(", E(b->a), ", ", E(b->b), ")"});
        if (IsBitNot(b)) return Precedence(b->a) < 11 ? "~(" + E(b->a) + ")" : "~" + E(b->a);
        static const std::unordered_map<int, const char*> sym = {
            {(int)BinaryOp::kAdd, " + "},       {(int)BinaryOp::kSub, " - "},
            {(int)BinaryOp::kMul, " * "},       {(int)BinaryOp::kDiv, " / "},
            {(int)BinaryOp::kFloorDiv, " // "}, {(int)BinaryOp::kFloorMod, " % "},
            {(int)BinaryOp::kEQ, " == "},       {(int)BinaryOp::kNE, " != "},
            {(int)BinaryOp::kLT, " < "},        {(int)BinaryOp::kLE, " <= "},
            {(int)BinaryOp::kGT, " > "},        {(int)BinaryOp::kGE, " >= "},
            {(int)BinaryOp::kAnd, " and "},     {(int)BinaryOp::kOr, " or "},
            {(int)BinaryOp::kBitAnd, " & "},    {(int)BinaryOp::kBitOr, " | "},
            {(int)BinaryOp::kBitXor, " ^ "},    {(int)BinaryOp::kShl, " << "},
            {(int)BinaryOp::kShr, " >> "}};
        int p = Precedence(e);
        // Left-associative: the right operand needs parentheses at equal precedence; comparisons
        // never chain.
        bool cmp = IsComparison(b->op);
        std::string l =
            Precedence(b->a) < p || (cmp && Precedence(b->a) == p) ? "(" + E(b->a) + ")" : E(b->a);
        std::string r = Precedence(b->b) <= p ? "(" + E(b->b) + ")" : E(b->b);
        return l + sym.at((int)b->op) + r;
      }
      case ExprKind::kNot: return "not (" + E(static_cast<const NotNode*>(e.get())->a) + ")";
      case ExprKind::kCast: {
        auto* c = static_cast<const CastNode*>(e.get());
        return "T.cast(" + E(c->value) + ", \"" + c->dtype.str() + "\")";
      }
      case ExprKind::kSelect: {
        auto* s = static_cast<const SelectNode*>(e.get());
        return Cat({"T.if_then_else(", E(s->cond), ", ", E(s->true_value), ", ", E(s->false_value), ")"});
      }
      case ExprKind::kCall: {
        auto* c = static_cast<const CallNode*>(e.get());
        if (!FrontEndCall(c->op)) {
          // Builtins of the lower IR carry their result type, so the text re-parses exactly.
          std::string s = "T.call_intrin(\"" + c->dtype.str() + "\", \"" + c->op + "\"";
          for (auto& a : c->args) s += ", " + E(a);
          return s + ")";
        }
        std::string s = "T." + c->op + "(";
        for (size_t i = 0; i < c->args.size(); ++i) s += (i ? ", " : "") + E(c->args[i]);
        return s + ")";
      }
      case ExprKind::kBufferLoad: {
        auto* l = static_cast<const BufferLoadNode*>(e.get());
        return Cat({BufName(l->buffer), "[", List(l->indices), "]"});
      }
    }
    return "?";
  }

  std::string List(const std::vector<Expr>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + E(v[i]);
    return s;
  }
  std::string Shape(const std::vector<Expr>& v) { return "(" + List(v) + (v.size() == 1 ? ",)" : ")"); }

  std::string R(const Region& r) {
    bool full = true;
    for (size_t i = 0; i < r.ranges.size(); ++i) {
      int64_t m;
      full &= AsConstInt(r.ranges[i].min, &m) && m == 0 && i < r.buffer->shape.size() &&
              ExprDeepEqualShallow(r.ranges[i].extent, r.buffer->shape[i]);
    }
    if (full && r.ranges.size() == r.buffer->shape.size()) return BufName(r.buffer);
    std::string s = BufName(r.buffer) + "[";
    for (size_t i = 0; i < r.ranges.size(); ++i) {
      if (i) s += ", ";
      const Range& rg = r.ranges[i];
      if (IsConstInt(rg.min, 0)) {
        s += "0:" + E(rg.extent);
      } else {
        int64_t a, b;
        if (AsConstInt(rg.min, &a) && AsConstInt(rg.extent, &b))
          s += std::to_string(a) + ":" + std::to_string(a + b);
        else
          s += Cat({E(rg.min), ":", E(Binary(BinaryOp::kAdd, rg.min, rg.extent))});
      }
    }
    return s + "]";
  }
  static bool ExprDeepEqualShallow(const Expr& a, const Expr& b) {
    if (a == b) return true;
    int64_t x, y;
    return AsConstInt(a, &x) && AsConstInt(b, &y) && x == y;
  }

  void Line(int indent, const std::string& s) { os_ << std::string(indent * 4, ' ') << s << "\n"; }

  void S(const Stmt& s, int ind) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kStore: {
        auto* n = As<StoreNode>(s);
        Line(ind, Cat({BufName(n->buffer), "[", List(n->indices), "] = ", E(n->value)}));
        break;
      }
      case StmtKind::kEvaluate: Line(ind, E(As<EvaluateNode>(s)->value)); break;
      case StmtKind::kLet: {
        auto* n = As<LetNode>(s);
        std::string value = E(n->value);  // the var is bound after its value
        Line(ind, VarName(n->var.get()) + " = " + value);
        S(n->body, ind);
        break;
      }
      case StmtKind::kFor: {
        auto* n = As<ForNode>(s);
        std::string args;
        if (IsConstInt(n->min, 0) && n->for_kind != ForKind::kSerial) {
          args = E(n->extent);
        } else {
          args = Cat({E(n->min), ", ", E(Binary(BinaryOp::kAdd, n->min, n->extent))});
          int64_t a, b;
          if (AsConstInt(n->min, &a) && AsConstInt(n->extent, &b))
            args = std::to_string(a) + ", " + std::to_string(a + b);
          else if (IsConstInt(n->min, 0))
            args = "0, " + E(n->extent);
        }
        std::string dotted;
        for (auto& kv : n->annotations) {
          if (IsIdentifier(kv.first)) {
            args += ", " + kv.first + "=" + E(kv.second);
          } else {
            std::string v = E(kv.second);
            dotted += (dotted.empty() ? "" : ", ") + ("\"" + kv.first + "\": ") + v;
          }
        }
        if (!dotted.empty()) args += ", annotations={" + dotted + "}";
        Line(ind, "for " + VarName(n->var.get()) + " in T." + ForKindName(n->for_kind) + "(" + args + "):");
        S(n->body, ind + 1);
        break;
      }
      case StmtKind::kWhile: {
        auto* n = As<WhileNode>(s);
        Line(ind, "while " + E(n->cond) + ":");
        S(n->body, ind + 1);
        break;
      }
      case StmtKind::kIf: {
        auto* n = As<IfNode>(s);
        Line(ind, "if " + E(n->cond) + ":");
        S(n->then_case, ind + 1);
        if (n->else_case) {
          Line(ind, "else:");
          S(n->else_case, ind + 1);
        }
        break;
      }
      case StmtKind::kSeq:
        for (auto& x : As<SeqNode>(s)->seq) S(x, ind);
        break;
      case StmtKind::kKernel: {
        auto* n = As<KernelNode>(s);
        std::string th = n->threads.size() == 1 ? E(n->threads[0]) : "[" + List(n->threads) + "]";
        std::string vars;
        for (size_t i = 0; i < n->block_vars.size(); ++i)
          vars += (i ? ", " : "") + VarName(n->block_vars[i].get());
        if (n->block_vars.size() > 1) vars = "(" + vars + ")";
        Line(ind, "with T.Kernel(" + List(n->grid) + ", threads=" + th + ") as " + vars + ":");
        for (auto& b : n->alloc_buffers) {
          std::string fn;
          switch (b->scope) {
            case Scope::kShared: fn = "T.alloc_shared"; break;
            case Scope::kFragment: fn = "T.alloc_fragment"; break;
            case Scope::kLocal: fn = "T.alloc_local"; break;
            case Scope::kLocalVar: fn = "T.alloc_var"; break;
            case Scope::kGlobal: fn = "T.alloc_global"; break;
            case Scope::kTensorMemory: fn = "T.alloc_tmem"; break;
            default: fn = "T.alloc_buffer"; break;
          }
          if (b->scope == Scope::kLocalVar) {
            std::string init;
            for (auto& kv : n->var_inits)
              if (kv.first == b) init = ", init=" + E(kv.second);
            Line(ind + 1, BufName(b) + " = " + fn + "(\"" + b->dtype.str() + "\"" + init + ")");
          } else if (b->data && b->scope != Scope::kShared && b->byte_offset == 0) {
            Line(ind + 1, BufName(b) + " = T.view(" + BufName(b->data) + ", " + Shape(b->shape) + ", \"" +
                              b->dtype.str() + "\")");
          } else {
            std::string view;
            if (b->data)
              view = Cat({", data=", BufName(b->data), ", byte_offset=", std::to_string(b->byte_offset)});
            Line(ind + 1, BufName(b) + " = " + fn + "(" + Shape(b->shape) + ", \"" + b->dtype.str() + "\"" +
                              view + ")");
          }
        }
        S(n->body, ind + 1);
        break;
      }
      case StmtKind::kAttr: {
        auto* n = As<AttrStmtNode>(s);
        std::string node = n->node ? BufName(n->node) : "None";
        if (n->key == "tl.buffer_bind" &&
            n->node) {  // printed as written: the tensor, then the rest of the block
          Line(ind, Cat({node, " = T.make_tensor(", E(n->value), ", ", Shape(n->node->shape), ", \"",
                         n->node->dtype.str(), "\")"}));
          S(n->body, ind);
          break;
        }
        Line(ind, Cat({"with T.attr(", node, ", \"", n->key, "\", ", E(n->value), "):"}));
        S(n->body, ind + 1);
        break;
      }
      case StmtKind::kTileOp: {
        TileOpCall c = As<TileOpNode>(s)->Call();
        std::string line = "T." + c.fn + "(";
        for (size_t i = 0; i < c.args.size(); ++i) {
          const TileOpArg& a = c.args[i];
          if (i) line += ", ";
          if (a.kind == TileOpArg::kRegion) {
            line += R(*a.region);
          } else if (a.kind == TileOpArg::kPoint) {
            std::vector<Expr> idx;
            for (auto& r : a.region->ranges) idx.push_back(r.min);
            line += Cat({BufName(a.region->buffer), "[", List(idx), "]"});
          } else {
            line += E(a.expr);
          }
        }
        for (auto& [k, v] : c.keywords) line += ", " + k + "=" + v;
        Line(ind, line + ")");
        break;
      }
    }
  }

  std::string Func(const PrimFunc& f) {
    // Reserve parameter names first so they keep their spelling.
    std::vector<std::string> params;
    std::set<const VarNode*> sym_seen;
    std::vector<const VarNode*> syms;
    for (auto& p : f->params) {
      if (p.buffer) {
        for (auto& d : p.buffer->shape) {
          PostOrderExprVars(d, [&](const VarNode* v) {
            if (sym_seen.insert(v).second) syms.push_back(v);
          });
        }
      }
    }
    std::ostringstream head;
    for (auto* v : syms) {
      std::string dt = v->dtype == DataType::Int(32) ? "" : ", \"" + v->dtype.str() + "\"";
      head << VarName(v) << " = T.dynamic(\"" << v->name << "\"" << dt << ")\n";
    }
    // Vars the body uses but never binds (the placeholders of layout values) are declared like
    // symbolic sizes, so that every use refers to one var.
    for (auto* v : FreeVars(f, sym_seen)) {
      syms.push_back(v);
      std::string dt = v->dtype == DataType::Int(32) ? "" : ", \"" + v->dtype.str() + "\"";
      head << VarName(v) << " = T.dynamic(\"" << v->name << "\"" << dt << ")\n";
    }
    if (!syms.empty()) head << "\n";
    for (auto& p : f->params) {
      if (p.buffer) {
        params.push_back(Cat({BufName(p.buffer), ": T.Tensor(", Shape(p.buffer->shape), ", \"",
                              p.buffer->dtype.str(), "\")"}));
      } else {
        params.push_back(VarName(p.var.get()) + ": T." + p.var->dtype.str());
      }
    }
    head << "@T.prim_func\ndef " << f->name << "(";
    for (size_t i = 0; i < params.size(); ++i) head << (i ? ", " : "") << params[i];
    head << "):\n";
    os_.str("");
    S(f->body, 1);
    std::string body = os_.str();
    if (body.empty()) body = "    pass\n";
    return head.str() + body;
  }

  static std::vector<const VarNode*> FreeVars(const PrimFunc& f, const std::set<const VarNode*>& bound) {
    struct V : IRVisitor {
      std::set<const VarNode*> defined, seen;
      std::vector<const VarNode*> free;
      void VisitVar(const VarNode* v) override {
        if (!defined.count(v) && seen.insert(v).second) free.push_back(v);
      }
      void VisitFor(const ForNode* n) override {
        defined.insert(n->var.get());
        IRVisitor::VisitFor(n);
      }
      void VisitLet(const LetNode* n) override {
        VisitExpr(n->value);
        defined.insert(n->var.get());
        VisitStmt(n->body);
      }
      void VisitKernel(const KernelNode* n) override {
        for (auto& b : n->block_vars) defined.insert(b.get());
        IRVisitor::VisitKernel(n);
      }
    } v;
    v.defined = bound;
    for (auto& p : f->params)
      if (!p.buffer) v.defined.insert(p.var.get());
    v.VisitStmt(f->body);
    return v.free;
  }

  static void PostOrderExprVars(const Expr& e, const std::function<void(const VarNode*)>& f) {
    struct V : IRVisitor {
      const std::function<void(const VarNode*)>& f;
      explicit V(const std::function<void(const VarNode*)>& g) : f(g) {}
      void VisitVar(const VarNode* v) override { f(v); }
    } v(f);
    v.VisitExpr(e);
  }

  std::ostringstream os_;

 private:
  NameTable names_{{"T", "tilelang"}};
};

}  // namespace

std::string PrintExpr(const Expr& e) { return Printer().E(e); }
std::string PrintStmt(const Stmt& s, int indent) {
  Printer p;
  p.S(s, indent);
  return p.os_.str();
}
std::string PrintPrimFunc(const PrimFunc& f) { return Printer().Func(f); }

}  // namespace tl
