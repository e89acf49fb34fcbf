// Shared C-family printing; see codegen_c.h.
#include "target/codegen_c.h"

#include "ir/functor.h"

#include <cmath>
#include <map>
#include <iomanip>
#include <limits>

namespace tl {

const std::set<std::string>& CReservedNames() {
  static const std::set<std::string> names = {
      // C and C++ keywords (including alternative operator spellings)
      "alignas",
      "alignof",
      "and",
      "and_eq",
      "asm",
      "auto",
      "bitand",
      "bitor",
      "bool",
      "break",
      "case",
      "catch",
      "char",
      "char8_t",
      "char16_t",
      "char32_t",
      "class",
      "compl",
      "concept",
      "const",
      "consteval",
      "constexpr",
      "constinit",
      "const_cast",
      "continue",
      "co_await",
      "co_return",
      "co_yield",
      "decltype",
      "default",
      "delete",
      "do",
      "double",
      "dynamic_cast",
      "else",
      "enum",
      "explicit",
      "export",
      "extern",
      "false",
      "float",
      "for",
      "friend",
      "goto",
      "if",
      "inline",
      "int",
      "long",
      "mutable",
      "namespace",
      "new",
      "noexcept",
      "not",
      "not_eq",
      "nullptr",
      "operator",
      "or",
      "or_eq",
      "private",
      "protected",
      "public",
      "register",
      "reinterpret_cast",
      "requires",
      "restrict",
      "return",
      "short",
      "signed",
      "sizeof",
      "static",
      "static_assert",
      "static_cast",
      "struct",
      "switch",
      "template",
      "this",
      "thread_local",
      "throw",
      "true",
      "try",
      "typedef",
      "typeid",
      "typename",
      "union",
      "unsigned",
      "using",
      "virtual",
      "void",
      "volatile",
      "wchar_t",
      "while",
      "xor",
      "xor_eq",
      "_Bool",
      "_Complex",
      "NULL",
      "main",
      // fixed-width and library types, namespaces and macros the generated code may name
      "int8_t",
      "int16_t",
      "int32_t",
      "int64_t",
      "uint8_t",
      "uint16_t",
      "uint32_t",
      "uint64_t",
      "size_t",
      "ptrdiff_t",
      "intptr_t",
      "uintptr_t",
      "std",
      "tl",
      "tl_cpu",
      "assert",
      "printf",
      "memcpy",
      "memset",
      "INFINITY",
      "NAN",
      "abs",
      "min",
      "max",
      "exp",
      "exp2",
      "expf",
      "exp2f",
      "log",
      "log2",
      "logf",
      "log2f",
      "log10",
      "log10f",
      "sqrt",
      "sqrtf",
      "rsqrt",
      "rsqrtf",
      "pow",
      "powf",
      "tanh",
      "tanhf",
      "erf",
      "erff",
      "floor",
      "floorf",
      "ceil",
      "ceilf",
      "round",
      "roundf",
      "fabs",
      "fabsf",
      "fmax",
      "fmaxf",
      "fmin",
      "fminf",
      "sin",
      "sinf",
      "cos",
      "cosf",
      "trunc",
      "truncf",
      "isinf",
      "isnan",
      // CUDA: builtin variables, vector and half types, qualifiers
      "threadIdx",
      "blockIdx",
      "blockDim",
      "gridDim",
      "warpSize",
      "dim3",
      "half",
      "half2",
      "bfloat16",
      "nv_bfloat16",
      "nv_bfloat162",
      "char1",
      "char2",
      "char3",
      "char4",
      "uchar1",
      "uchar2",
      "uchar3",
      "uchar4",
      "short1",
      "short2",
      "short3",
      "short4",
      "ushort1",
      "ushort2",
      "ushort3",
      "ushort4",
      "int1",
      "int2",
      "int3",
      "int4",
      "uint1",
      "uint2",
      "uint3",
      "uint4",
      "long1",
      "long2",
      "long3",
      "long4",
      "ulong1",
      "ulong2",
      "ulong3",
      "ulong4",
      "longlong1",
      "longlong2",
      "longlong3",
      "longlong4",
      "ulonglong1",
      "ulonglong2",
      "float1",
      "float2",
      "float3",
      "float4",
      "double1",
      "double2",
      "double3",
      "double4",
      "make_float2",
      "make_float4",
      "make_int4",
      "make_uint4",
      "atomicAdd",
      "atomicMax",
      "atomicMin",
      "atomicCAS",
      "atomicExch",
  };
  return names;
}

std::string CodegenC::Name(const void* key, const std::string& base) { return names_.Get(key, base); }

// A global index widened to 64 bits. The terms that vary with an enclosing loop the compiler unrolls are
// constants in each unrolled copy: widened apart from the rest ((int64)(rest) + (int64)(unrolled)), they
// fold into the access's immediate offset and the rest is computed once for all copies, where the whole
// sum widened at once is a 64-bit address computation per copy (the sum cannot be split through the cast,
// which would change its value on overflow). Only where the unrolled part is small and not negative, so
// that neither part overflows where the sum does not, and only inside a loop that runs them again and again
// (a main loop's atomics or stores; once-only prologues and epilogues are left to nvcc as written).
std::string CodegenC::WideIndex(const Expr& e) {
  if (!unrolled_.empty() && rolled_loops_ > 0 && e->dtype.is_int() && e->dtype.bits() == 32) {
    Expr fixed, moving;
    for (const Expr& t : AddTerms(e)) {
      bool unrolled = false;
      for (const VarNode* v : VarsOf(t).vars) unrolled = unrolled || unrolled_.count(v);
      Expr& part = unrolled ? moving : fixed;
      part = part ? Binary(BinaryOp::kAdd, part, t) : t;
    }
    if (fixed && moving) {
      Interval r = BoundOf(moving, bounds_);
      if (r.lo && r.hi && *r.lo >= 0 && *r.hi < (int64_t(1) << 24))
        return "((int64_t)(" + E(fixed) + ") + (int64_t)(" + E(moving) + "))";
    }
  }
  return "(int64_t)(" + E(e) + ")";
}

std::string CodegenC::Offset(const Buffer& b, const std::vector<Expr>& idx) {
  if (idx.size() == 1) return b->scope == Scope::kGlobal ? WideIndex(idx[0]) : E(idx[0]);
  std::string s;
  for (size_t i = 0; i < idx.size(); ++i) {
    std::string stride;
    for (size_t j = i + 1; j < b->shape.size(); ++j)
      stride += (stride.empty() ? "" : " * ") + std::string("(int64_t)") + E(b->shape[j]);
    std::string term = WideIndex(idx[i]) + (stride.empty() ? "" : " * " + stride);
    s += (i ? " + " : "") + term;
  }
  return s;
}

std::string CodegenC::Lit(const Expr& e) {
  if (auto* i = As<IntImmNode>(e)) {
    if (e->dtype.is_bool()) return i->value ? "true" : "false";
    std::string v = std::to_string(i->value);
    if (e->dtype.bits() == 64) return "int64_t(" + v + "LL)";
    if (e->dtype == DataType::Int(32)) return v;
    return CType(e->dtype) + "(" + v + ")";
  }
  auto* f = As<FloatImmNode>(e);
  std::ostringstream os;
  std::string v;
  if (std::isinf(f->value))
    v = InfLiteral(f->value < 0);
  else if (std::isnan(f->value))
    v = NanLiteral();
  else {
    os << std::setprecision(std::numeric_limits<double>::max_digits10) << f->value;
    v = os.str();
    if (v.find_first_of(".e") == std::string::npos) v += ".0";
  }
  if (e->dtype == DataType::Float(64)) return v;
  if (e->dtype == DataType::Float(32)) return std::isfinite(f->value) ? v + "f" : "float(" + v + ")";
  return CType(e->dtype) + "(float(" + v + "))";
}

std::string CodegenC::E(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm: return Lit(e);
    case ExprKind::kStringImm: {
      std::string s = "\"";
      for (char c : static_cast<const StringImmNode*>(e.get())->value) {
        if (c == '"' || c == '\\') s += '\\';
        if (c == '\n') {
          s += "\\n";
          continue;
        }
        s += c;
      }
      return s + "\"";
    }
    case ExprKind::kVar: return Name(static_cast<const VarNode*>(e.get()));
    case ExprKind::kBinary: {
      auto* b = static_cast<const BinaryNode*>(e.get());
      std::string x = E(b->a), y = E(b->b);
      if (IsBitwise(b->op)) return BitwiseE(b, x, y);
      bool fl = b->a->dtype.is_float();
      // C promotes integers narrower than int to int; the IR's arithmetic is typed (int8 * int8
      // wraps at 8 bits, as in the emulator), so narrow results are converted back at each step.
      DataType rt = b->dtype;
      if (rt.is_integer() && rt.bits() < 32 && !IsComparison(b->op) && b->op != BinaryOp::kAnd &&
          b->op != BinaryOp::kOr) {
        std::string inner;
        switch (b->op) {
          case BinaryOp::kAdd: inner = "(" + x + " + " + y + ")"; break;
          case BinaryOp::kSub: inner = "(" + x + " - " + y + ")"; break;
          case BinaryOp::kMul: inner = "(" + x + " * " + y + ")"; break;
          case BinaryOp::kDiv: inner = IntDivMod(true, x, y, b->a->dtype); break;
          case BinaryOp::kMod: inner = IntDivMod(false, x, y, b->a->dtype); break;
          case BinaryOp::kFloorDiv: inner = ns_ + "floordiv<" + CType(rt) + ">(" + x + ", " + y + ")"; break;
          case BinaryOp::kFloorMod: inner = ns_ + "floormod<" + CType(rt) + ">(" + x + ", " + y + ")"; break;
          case BinaryOp::kMin: inner = ns_ + "min_<" + CType(rt) + ">(" + x + ", " + y + ")"; break;
          case BinaryOp::kMax: inner = ns_ + "max_<" + CType(rt) + ">(" + x + ", " + y + ")"; break;
          default: break;
        }
        if (!inner.empty()) return CType(rt) + "(" + inner + ")";
      }
      // Arithmetic on 16-bit and fp8 floats computes in float, so the operands of a helper
      // (min_, max_, floordiv, ...) may be a half_t and a float: convert both to the op's type.
      if (rt.is_float() && (rt.bits() < 32 || rt.code() != DataType::Code::kFloat)) {
        switch (b->op) {
          case BinaryOp::kMin:
          case BinaryOp::kMax:
          case BinaryOp::kFloorDiv:
          case BinaryOp::kFloorMod:
          case BinaryOp::kMod: {
            std::string c = ns_ + "cast<" + CType(rt) + ">(";
            x = c + x + ")";
            y = c + y + ")";
            break;
          }
          default: break;
        }
      }
      if ((b->op == BinaryOp::kFloorDiv || b->op == BinaryOp::kFloorMod) && rt.is_integer()) {
        std::string fast = NonNegativeDivMod(b, x);
        if (!fast.empty()) return fast;
      }
      // A float16 / bfloat16 / fp8 result is of that type: rounded here, not only where it is stored, so
      // that `acc + a * b` with half a, b adds the rounded product on every backend (the emulator's rule).
      const bool round = rt.is_float() && (rt.bits() < 32 || rt.code() != DataType::Code::kFloat) &&
                         NarrowFloatsComputeInFloat();
      auto typed = [&](const std::string& v) {
        return round ? ns_ + "cast<" + CType(rt) + ">(" + v + ")" : v;
      };
      switch (b->op) {
        case BinaryOp::kAdd: return typed("(" + x + " + " + y + ")");
        case BinaryOp::kSub: return typed("(" + x + " - " + y + ")");
        case BinaryOp::kMul: return typed("(" + x + " * " + y + ")");
        case BinaryOp::kDiv:
          return fl ? typed("(" + x + " / " + y + ")") : IntDivMod(true, x, y, b->a->dtype);
        case BinaryOp::kMod:
          return fl ? typed(ns_ + "fmod_(" + x + ", " + y + ")") : IntDivMod(false, x, y, b->a->dtype);
        case BinaryOp::kFloorDiv: return typed(ns_ + "floordiv(" + x + ", " + y + ")");
        case BinaryOp::kFloorMod: return typed(ns_ + "floormod(" + x + ", " + y + ")");
        case BinaryOp::kMin: return ns_ + "min_(" + x + ", " + y + ")";
        case BinaryOp::kMax: return ns_ + "max_(" + x + ", " + y + ")";
        case BinaryOp::kEQ:
        case BinaryOp::kNE:
        case BinaryOp::kLT:
        case BinaryOp::kLE:
        case BinaryOp::kGT:
        case BinaryOp::kGE:
        case BinaryOp::kAnd:
        case BinaryOp::kOr: return ComparisonOrLogic(b->op, x, y);
        default: break;
      }
      return "?";
    }
    case ExprKind::kNot: return "(!" + E(static_cast<const NotNode*>(e.get())->a) + ")";
    case ExprKind::kCast: {
      auto* c = static_cast<const CastNode*>(e.get());
      return ns_ + "cast<" + CType(c->dtype) + ">(" + E(c->value) + ")";
    }
    case ExprKind::kSelect: {
      auto* s = static_cast<const SelectNode*>(e.get());
      // Arithmetic on the 16-bit and fp8 types computes in float, so the two branches may have
      // different C++ types (float vs half_t); convert both to the select's type.
      DataType t = s->dtype;
      if (t.is_float() && (t.bits() < 32 || t.code() != DataType::Code::kFloat)) {
        std::string c = ns_ + "cast<" + CType(t) + ">(";
        return "(" + E(s->cond) + " ? " + c + E(s->true_value) + ") : " + c + E(s->false_value) + "))";
      }
      return "(" + E(s->cond) + " ? " + E(s->true_value) + " : " + E(s->false_value) + ")";
    }
    case ExprKind::kCall: return CallE(static_cast<const CallNode*>(e.get()));
    case ExprKind::kBufferLoad: {
      auto* l = static_cast<const BufferLoadNode*>(e.get());
      const std::string load = Name(l->buffer.get(), l->buffer->name) + "[" + Offset(l->buffer, l->indices) + "]";
      const DataType bt = l->buffer->dtype;
      const std::string i8 = CType(DataType::Int(8));
      // int4 is stored one value per byte in the low nibble (docs/semantics.md): where the dialect holds it in
      // an 8-bit integer (no nibble type of its own), a read sign-extends bit 3 (the PTX emulator found these
      // reads returning 8..15 for -8..-1)
      if (bt.is_int() && bt.bits() == 4 && CType(bt) == i8)
        return "((" + i8 + ")((" + i8 + ")(" + load + " << 4) >> 4))";
      return load;
    }
  }
  return "?";
}

std::string CodegenC::Lvalue(const Expr& e) {
  if (auto* l = As<BufferLoadNode>(e)) return Name(l->buffer.get(), l->buffer->name) + "[" + Offset(l->buffer, l->indices) + "]";
  return E(e);
}

std::string CodegenC::Args(const CallNode* c) {
  std::string args;
  for (size_t i = 0; i < c->args.size(); ++i) args += (i ? ", " : "") + E(c->args[i]);
  return args;
}

std::string CodegenC::NonNegativeDivMod(const BinaryNode* b, const std::string& x) {
  int64_t d = 0;
  if (!AsConstInt(b->b, &d) || d <= 0) return "";
  Interval a = BoundOf(b->a, bounds_);
  if (!a.lo || *a.lo < 0) return "";
  bool div = b->op == BinaryOp::kFloorDiv;
  if ((d & (d - 1)) == 0) {  // a power of two
    int k = 0;
    while ((int64_t(1) << k) < d) ++k;
    if (div) return k == 0 ? x : "(" + x + " >> " + std::to_string(k) + ")";
    return "(" + x + " & " + std::to_string(d - 1) + ")";
  }
  // Floor and truncating division agree on non-negative operands; unsigned tells the compiler so.
  DataType t = b->dtype;
  DataType u = DataType::UInt(t.bits());
  return "((" + CType(t) + ")((" + CType(u) + ")" + x + (div ? " / " : " % ") + std::to_string(d) + "u))";
}

std::string CodegenC::BitCountE(const CallNode* c, const std::string& popcount64, const std::string& clz64) {
  // Counted on the value zero-extended to 64 bits; clz64 may be undefined for 0, which is tested first.
  const DataType t = c->args[0]->dtype;
  const std::string z =
      "((unsigned long long)(" + CType(DataType::UInt(t.bits())) + ")(" + E(c->args[0]) + "))";
  const std::string T = CType(c->dtype);
  if (c->op == "popcount") return "((" + T + ")" + popcount64 + "(" + z + "))";
  return "((" + T + ")(" + z + " == 0ull ? " + std::to_string(t.bits()) + " : " + clz64 + "(" + z + ") - " +
         std::to_string(64 - t.bits()) + "))";
}

std::string CodegenC::CallE(const CallNode* c) {
  if (c->op == "address_of") return "(&" + Lvalue(c->args[0]) + ")";
  if (c->op == "popcount" || c->op == "clz") return BitCountE(c, "__builtin_popcountll", "__builtin_clzll");
  if (c->op == "tl.reinterpret") {  // the operand is first brought to its own dtype's C type
    DataType from = c->args[0]->dtype;
    return ns_ + "bit_cast<" + CType(c->dtype) + ">(" + ns_ + "cast<" + CType(from) + ">(" + E(c->args[0]) +
           "))";
  }
  if (c->op == "min_value" || c->op == "max_value")
    return ns_ + (c->op == "min_value" ? "lowest" : "highest") + "<" + CType(c->dtype) + ">()";
  return ns_ + c->op + "(" + Args(c) + ")";
}

void CodegenC::Stmt_(const Stmt& s, int ind) {
  if (!s) return;
  if (s->span.defined()) cur_span_ = s->span;
  switch (s->kind) {
    case StmtKind::kStore: {
      auto* n = As<StoreNode>(s);
      Line(ind, Name(n->buffer.get(), n->buffer->name) + "[" + Offset(n->buffer, n->indices) +
                    "] = " + E(n->value) + ";");
      break;
    }
    case StmtKind::kEvaluate: Line(ind, E(As<EvaluateNode>(s)->value) + ";"); break;
    case StmtKind::kLet: {
      auto* n = As<LetNode>(s);
      Line(ind, "{");
      Line(ind + 1, "const " + CType(n->var->dtype) + " " + Name(n->var.get()) + " = " + E(n->value) + ";");
      if (n->var->dtype.is_integer()) {
        auto* c = As<CallNode>(n->value);
        bounds_[n->var.get()] =
            c && c->op == "tl.thread_idx" ? Interval{int64_t(0), std::nullopt} : BoundOf(n->value, bounds_);
      }
      Stmt_(n->body, ind + 1);
      bounds_.erase(n->var.get());
      Line(ind, "}");
      break;
    }
    case StmtKind::kFor: {
      auto* n = As<ForNode>(s);
      std::string v = Name(n->var.get());
      ForPragma(n, ind);
      std::string t = CType(n->var->dtype);
      Line(ind, "for (" + t + " " + v + " = " + E(n->min) + "; " + v + " < " + E(n->min) + " + " +
                    E(n->extent) + "; ++" + v + ") {");
      int64_t lo = 0, ext = 0;
      if (n->var->dtype.is_integer() && AsConstInt(n->min, &lo)) {
        Interval r{lo, std::nullopt};
        if (AsConstInt(n->extent, &ext) && ext > 0) r.hi = lo + ext - 1;
        bounds_[n->var.get()] = r;
      }
      const bool unrolled = (n->for_kind == ForKind::kUnrolled || n->for_kind == ForKind::kVectorized) &&
                            AsConstInt(n->extent, &ext);
      if (unrolled) unrolled_.insert(n->var.get());
      rolled_loops_ += unrolled ? 0 : 1;
      Stmt_(n->body, ind + 1);
      rolled_loops_ -= unrolled ? 0 : 1;
      unrolled_.erase(n->var.get());
      bounds_.erase(n->var.get());
      Line(ind, "}");
      break;
    }
    case StmtKind::kWhile: {
      auto* n = As<WhileNode>(s);
      Line(ind, "while (" + E(n->cond) + ") {");
      Stmt_(n->body, ind + 1);
      Line(ind, "}");
      break;
    }
    case StmtKind::kIf: {
      auto* n = As<IfNode>(s);
      Line(ind, "if (" + E(n->cond) + ") {");
      Stmt_(n->then_case, ind + 1);
      if (n->else_case) {
        Line(ind, "} else {");
        Stmt_(n->else_case, ind + 1);
      }
      Line(ind, "}");
      break;
    }
    case StmtKind::kSeq:
      for (auto& x : As<SeqNode>(s)->seq) Stmt_(x, ind);
      break;
    case StmtKind::kKernel: {
      auto* k = As<KernelNode>(s);
      for (size_t i = 0; i < k->block_vars.size() && i < k->grid.size(); ++i) {
        Interval r{int64_t(0), std::nullopt};
        int64_t g = 0;
        if (AsConstInt(k->grid[i], &g) && g > 0) r.hi = g - 1;
        bounds_[k->block_vars[i].get()] = r;
      }
      Kernel(k, ind);
      break;
    }
    case StmtKind::kAttr: {  // facts for the passes; a tile op's code is bracketed for source maps
      auto* a = As<AttrStmtNode>(s);
      int64_t op = -1;
      bool mark = a->key == "tl.tile_op" && AsConstInt(a->value, &op);
      if (mark) Line(ind, "// tile op " + std::to_string(op));
      if (a->key == "tl.tma_multicast") {  // the TMA loads inside go to every block of the cluster mask
        const int64_t saved = tma_multicast_;
        TL_ICHECK(AsConstInt(a->value, &tma_multicast_), "tl.tma_multicast takes a constant mask");
        Stmt_(a->body, ind);
        tma_multicast_ = saved;
        break;
      }
      if (a->key == "tl.buffer_bind") {  // a tensor at a run-time address, in a block of its own
        Line(ind, "{");
        BindBuffer(a, ind + 1);
        Stmt_(a->body, ind + 1);
        Line(ind, "}");
        break;
      }
      Stmt_(a->body, ind);
      if (mark) Line(ind, "// end tile op " + std::to_string(op));
      break;
    }
    default: throw InternalError("tile op reached the code generator; the target's lowering must run first");
  }
}

void CodegenC::BindBuffer(const AttrStmtNode* a, int ind) {
  const Buffer& b = a->node;
  Line(ind, CType(b->dtype) + "* " + Name(b.get(), b->name) + " = reinterpret_cast<" + CType(b->dtype) +
                "*>(" + E(a->value) + ");");
}

namespace {
constexpr int64_t kUnrollBudget = 16384;  // IR nodes a fully unrolled loop may expand to

// IR nodes of a statement as it is printed, with unrolled loops multiplied by their trip counts
// (saturating just past the budget).
int64_t AllNodes(const Stmt& s) {
  struct V : IRVisitor {
    int64_t n = 0;
    void VisitExpr(const Expr& e) override {
      ++n;
      IRVisitor::VisitExpr(e);
    }
  } v;
  v.VisitStmt(s);
  int64_t stmts = 0;
  PostOrderVisitStmt(s, [&](const Stmt&) { ++stmts; });
  return v.n + stmts;
}
int64_t UnrolledNodes(const Stmt& s) {
  if (!s) return 0;
  auto cap = [](int64_t v) { return std::min(v, kUnrollBudget + 1); };
  if (auto* f = As<ForNode>(s)) {
    int64_t ext = 0, body = UnrolledNodes(f->body);
    bool unrolled = f->for_kind == ForKind::kUnrolled || f->for_kind == ForKind::kVectorized;
    if (!unrolled || !AsConstInt(f->extent, &ext) || ext <= 1) return cap(body + 1);
    return body > kUnrollBudget / ext ? kUnrollBudget + 1 : cap(ext * body + 1);
  }
  if (auto* q = As<SeqNode>(s)) {
    int64_t n = 0;
    for (auto& x : q->seq) n = cap(n + UnrolledNodes(x));
    return n;
  }
  if (auto* i = As<IfNode>(s)) return cap(1 + UnrolledNodes(i->then_case) + UnrolledNodes(i->else_case));
  if (auto* l = As<LetNode>(s)) return cap(1 + UnrolledNodes(l->body));
  if (auto* a = As<AttrStmtNode>(s)) return cap(1 + UnrolledNodes(a->body));
  return cap(AllNodes(s));
}
}  // namespace

std::string CodegenC::PartialUnrollPragma(const ForNode* n) {
  auto it = n->annotations.find("tl.unroll_by");
  int64_t by = 0;
  if (n->for_kind != ForKind::kSerial || it == n->annotations.end() || !AsConstInt(it->second, &by) || by < 2)
    return "";
  // A hint: the copies must stay within half the full-unroll budget (a GEMM main loop does; a
  // FlashAttention one, which would mostly grow the instruction footprint, does not).
  if (UnrolledNodes(n->body) > kUnrollBudget / 2 / by) return "";
  // A loop of at most `by` iterations would be unrolled whole; a warp-specialised consumer loop unrolled
  // whole gets its wgmma serialised by ptxas (C7520, measured with 4 iterations and a hint of 4), so the
  // loop stays a loop, unrolled by a power of two below half its trips.
  int64_t ext = 0;
  if (AsConstInt(n->extent, &ext) && ext <= by) {
    int64_t p = 1;
    while (p * 2 <= ext / 2) p *= 2;
    return "#pragma unroll " + std::to_string(p);
  }
  return "#pragma unroll " + std::to_string(by);
}

std::string CodegenC::UnrollPragma(const ForNode* n) {
  int64_t ext = 0;
  if (!AsConstInt(n->extent, &ext) || ext <= 1) return "#pragma unroll";
  const int64_t body = UnrolledNodes(n->body);
  return body > kUnrollBudget / ext ? "#pragma unroll 4" : "#pragma unroll";
}

std::string CodegenC::BitwiseE(const BinaryNode* b, const std::string& x, const std::string& y) {
  const DataType t = b->dtype;
  const int bits = t.bits();
  const std::string T = CType(t), U = CType(DataType::UInt(bits)), w = std::to_string(bits);
  // C computes on values promoted to int; the IR's result is of the operands' type.
  auto typed = [&](const std::string& v) { return bits < 32 ? "((" + T + ")" + v + ")" : v; };
  switch (b->op) {
    case BinaryOp::kBitAnd: return typed("(" + x + " & " + y + ")");
    case BinaryOp::kBitOr: return typed("(" + x + " | " + y + ")");
    case BinaryOp::kBitXor: return typed("(" + x + " ^ " + y + ")");
    default: break;
  }
  int64_t c;
  const bool in_range = AsConstInt(b->b, &c) && c >= 0 && c < bits;
  std::string shifted, out_of_range;
  if (b->op == BinaryOp::kShl) {
    shifted = "((" + T + ")((" + U + ")(" + x + ") << (" + y + ")))";
    out_of_range = "(" + T + ")0";
  } else {
    shifted = "((" + T + ")((" + x + ") >> (" + y + ")))";
    out_of_range =
        t.is_int() ? "((" + T + ")((" + x + ") >> " + std::to_string(bits - 1) + "))" : "(" + T + ")0";
  }
  if (in_range) return shifted;
  return "(((" + U + ")(" + y + ") < " + w + "u) ? " + shifted + " : " + out_of_range + ")";
}

std::string CodegenC::ComparisonOrLogic(BinaryOp op, const std::string& x, const std::string& y) {
  static const std::map<BinaryOp, const char*> sym = {
      {BinaryOp::kEQ, " == "}, {BinaryOp::kNE, " != "}, {BinaryOp::kLT, " < "},   {BinaryOp::kLE, " <= "},
      {BinaryOp::kGT, " > "},  {BinaryOp::kGE, " >= "}, {BinaryOp::kAnd, " && "}, {BinaryOp::kOr, " || "}};
  return "(" + x + sym.at(op) + y + ")";
}

}  // namespace tl
