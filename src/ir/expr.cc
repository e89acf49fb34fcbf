// Expression constructors and the type-promotion rules of binary operators.
#include "ir/expr.h"

#include <cmath>

#include "ir/stmt.h"

namespace tl {

const char* BinaryOpName(BinaryOp op) {
  static const char* names[] = {"add",        "sub",         "mul",        "div",        "mod", "floordiv",
                                "floormod",   "min",         "max",        "eq",         "ne",  "lt",
                                "le",         "gt",          "ge",         "and",        "or",  "bitwise_and",
                                "bitwise_or", "bitwise_xor", "shift_left", "shift_right"};
  return names[static_cast<int>(op)];
}
bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEQ && op <= BinaryOp::kGE; }
bool IsBitwise(BinaryOp op) { return op >= BinaryOp::kBitAnd && op <= BinaryOp::kShr; }

const char* ScopeName(Scope s) {
  switch (s) {
    case Scope::kGlobal: return "global";
    case Scope::kShared: return "shared";
    case Scope::kFragment: return "local.fragment";
    case Scope::kLocal: return "local";
    case Scope::kLocalVar: return "local.var";
    case Scope::kTensorMemory: return "shared.tmem";
  }
  return "?";
}

Expr IntImm(DataType t, int64_t v) {
  if (t.is_bool()) v = v != 0;
  return std::make_shared<IntImmNode>(t, v);
}
Expr FloatImm(DataType t, double v) { return std::make_shared<FloatImmNode>(t, v); }
Expr Bool(bool v) { return IntImm(DataType::Bool(), v); }
Expr StringImm(const std::string& v) { return std::make_shared<StringImmNode>(v); }
Var MakeVar(const std::string& name, DataType t) { return std::make_shared<VarNode>(name, t); }

bool AsConstInt(const Expr& e, int64_t* v) {
  if (auto* i = As<IntImmNode>(e)) {
    *v = i->value;
    return true;
  }
  return false;
}

namespace {
bool IsImm(const Expr& e) { return e->kind == ExprKind::kIntImm || e->kind == ExprKind::kFloatImm; }

// Retypes a literal in place of a cast so that `x * 2` stays `x * 2` in every type.
Expr Retype(const Expr& e, DataType t) {
  if (e->dtype == t) return e;
  if (auto* i = As<IntImmNode>(e)) {
    if (t.is_float()) return FloatImm(t, static_cast<double>(i->value));
    if (t.is_integer() || t.is_bool()) return IntImm(t, i->value);
  }
  if (auto* f = As<FloatImmNode>(e)) {
    if (t.is_float()) return FloatImm(t, f->value);
  }
  return Cast(t, e);
}

DataType Promote(const DataType& a, const DataType& b) {
  if (a == b) return a;
  if (a.is_float() && !b.is_float()) return a;
  if (b.is_float() && !a.is_float()) return b;
  if (a.is_bool()) return b;
  if (b.is_bool()) return a;
  if (a.is_float() && b.is_float()) {
    if (a.bits() != b.bits()) return a.bits() > b.bits() ? a : b;
    return DataType::Float(32);  // e.g. float16 with bfloat16
  }
  if (a.bits() != b.bits()) return a.bits() > b.bits() ? a : b;
  return a.is_int() ? a : b;
}
}  // namespace

Expr Binary(BinaryOp op, Expr a, Expr b) {
  TL_ICHECK(a && b, "null operand of ", BinaryOpName(op));
  DataType t;
  if (a->dtype == b->dtype) {
    t = a->dtype;
  } else if (IsImm(a) && !IsImm(b) && !(a->kind == ExprKind::kFloatImm && !b->dtype.is_float())) {
    t = b->dtype;
  } else if (IsImm(b) && !IsImm(a) && !(b->kind == ExprKind::kFloatImm && !a->dtype.is_float())) {
    t = a->dtype;
  } else {
    t = Promote(a->dtype, b->dtype);
  }
  if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
    t = DataType::Bool();
  }
  if (IsBitwise(op)) {
    // Bitwise operators are defined on integers; a bool operand takes part as 0 / 1.
    if (t.is_bool()) t = DataType::Int(32);
    if (!t.is_integer())
      TL_USER_ERROR(kType, Span{}, "the bitwise operator ", BinaryOpName(op), " needs integer operands, not ",
                    t.str(), " (cast with T.Cast or reinterpret the bits with T.reinterpret first)");
  }
  a = Retype(a, t);
  b = Retype(b, t);
  DataType rt = (IsComparison(op) || op == BinaryOp::kAnd || op == BinaryOp::kOr) ? DataType::Bool() : t;
  return std::make_shared<BinaryNode>(rt, op, std::move(a), std::move(b));
}

Expr Not(Expr a) { return std::make_shared<NotNode>(Retype(a, DataType::Bool())); }
Expr AllOnes(DataType t) {
  return IntImm(t, t.is_uint() && t.bits() < 64 ? static_cast<int64_t>((uint64_t(1) << t.bits()) - 1) : -1);
}
Expr BitNot(Expr a) {
  DataType t = a->dtype.is_bool() ? DataType::Int(32) : a->dtype;
  return Binary(BinaryOp::kBitXor, Retype(a, t), AllOnes(t));
}
Expr Cast(DataType t, Expr a) {
  if (a->dtype == t) return a;
  return std::make_shared<CastNode>(t, std::move(a));
}
Expr Select(Expr c, Expr t, Expr f) {
  if (t->dtype != f->dtype) {
    // A literal takes the other branch's type, unless that would turn a float literal into an integer
    // (`if_then_else(c, -inf, 0)` is a float select, as in TVM): then both promote.
    auto narrows = [](const Expr& imm, DataType to) { return imm->dtype.is_float() && !to.is_float(); };
    if (IsImm(t) && !IsImm(f) && !narrows(t, f->dtype))
      t = Retype(t, f->dtype);
    else if (IsImm(f) && !IsImm(t) && !narrows(f, t->dtype))
      f = Retype(f, t->dtype);
    else if (IsImm(t) && IsImm(f) && !narrows(t, f->dtype) && !t->dtype.is_float())
      t = Retype(t, f->dtype);
    else if (IsImm(t) && IsImm(f) && !narrows(f, t->dtype) && !f->dtype.is_float())
      f = Retype(f, t->dtype);
    else {
      DataType p = Promote(t->dtype, f->dtype);
      t = Retype(t, p);
      f = Retype(f, p);
    }
  }
  return std::make_shared<SelectNode>(Retype(c, DataType::Bool()), std::move(t), std::move(f));
}
Expr Call(DataType t, const std::string& op, std::vector<Expr> args) {
  return std::make_shared<CallNode>(t, op, std::move(args));
}
Expr Load(const Buffer& b, std::vector<Expr> indices) {
  return std::make_shared<BufferLoadNode>(b, std::move(indices));
}
Buffer MakeBuffer(const std::string& name, DataType t, std::vector<Expr> shape, Scope scope, Span span) {
  return std::make_shared<BufferNode>(name, t, std::move(shape), scope, std::move(span));
}
Buffer MakeBufferView(const Buffer& like, const Buffer& data, int64_t byte_offset) {
  return std::make_shared<BufferNode>(like->name, like->dtype, like->shape, like->scope, like->span, data,
                                      byte_offset);
}

}  // namespace tl
