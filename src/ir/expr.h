// Expressions of the IR: immutable nodes shared by pointer. Vars and Buffers have identity (two
// vars named "i" are different vars); everything else is a value compared structurally.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "support/error.h"

namespace tl {

enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kStringImm,
  kVar,
  kBinary,
  kNot,
  kCast,
  kSelect,
  kCall,
  kBufferLoad
};

struct ExprNode {
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const DataType dtype;
};
using Expr = std::shared_ptr<const ExprNode>;

/// Checked downcast: returns nullptr when `e` is not of node type T.
template <typename T>
const T* As(const Expr& e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
};
struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  const double value;
};
struct StringImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kStringImm;
  explicit StringImmNode(std::string v) : ExprNode(kKind, DataType::Handle()), value(std::move(v)) {}
  const std::string value;
};
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};
using Var = std::shared_ptr<const VarNode>;

enum class BinaryOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kFloorDiv,
  kFloorMod,
  kMin,
  kMax,
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,  // logical, on bool
  kOr,   // logical, on bool
  // Bitwise, on integers (docs/semantics.md): the result has the operands' type; a shift count
  // outside [0, bits) gives what PTX's clamping shl/shr give (0, or the sign for >> on signed).
  kBitAnd,
  kBitOr,
  kBitXor,
  kShl,
  kShr  // arithmetic on signed types, logical on unsigned
};
const char* BinaryOpName(BinaryOp op);  // "add", "floordiv", ...
bool IsComparison(BinaryOp op);
bool IsBitwise(BinaryOp op);  // & | ^ << >>

struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  BinaryNode(DataType t, BinaryOp o, Expr x, Expr y)
      : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
};
struct NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  explicit NotNode(Expr x) : ExprNode(kKind, DataType::Bool()), a(std::move(x)) {}
  const Expr a;
};
struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  CastNode(DataType t, Expr x) : ExprNode(kKind, t), value(std::move(x)) {}
  const Expr value;
};
struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t->dtype), cond(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};
/// A call of a named pure intrinsic ("exp2", "sqrt", ...) or of a thread-level builtin.
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(DataType t, std::string o, std::vector<Expr> a)
      : ExprNode(kKind, t), op(std::move(o)), args(std::move(a)) {}
  const std::string op;
  const std::vector<Expr> args;
};

/// Memory scopes a buffer may live in.
// kTensorMemory: Blackwell tensor memory (T.alloc_tmem, "shared.tmem"), which only tcgen05 instructions reach; the
// CUDA lowering replaces it by an allocation of columns (src/target/cuda/lower_tensor_memory.cc).
enum class Scope : uint8_t { kGlobal, kShared, kFragment, kLocal, kLocalVar, kTensorMemory };
const char* ScopeName(Scope s);

struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;
struct BufferNode {
  BufferNode(std::string n, DataType t, std::vector<Expr> s, Scope sc, Span sp = {}, Buffer d = nullptr,
             int64_t off = 0)
      : name(std::move(n)),
        dtype(t),
        shape(std::move(s)),
        scope(sc),
        span(std::move(sp)),
        data(std::move(d)),
        byte_offset(off) {}
  const std::string name;
  const DataType dtype;
  const std::vector<Expr> shape;
  const Scope scope;
  const Span span;  // where it was declared or allocated
  /// A view: this buffer's elements live in `data`'s storage from `byte_offset` on (shared
  /// buffers after PlanSharedMemory live in the kernel's one byte buffer). Null: own storage.
  const Buffer data;
  const int64_t byte_offset;
};

struct BufferLoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  BufferLoadNode(Buffer b, std::vector<Expr> i)
      : ExprNode(kKind, b->dtype), buffer(std::move(b)), indices(std::move(i)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
};

// ---- constructors ---------------------------------------------------------------------------
Expr IntImm(DataType t, int64_t v);
inline Expr Int(int64_t v) { return IntImm(DataType::Int(32), v); }
Expr FloatImm(DataType t, double v);
Expr Bool(bool v);
Expr StringImm(const std::string& v);
Var MakeVar(const std::string& name, DataType t = DataType::Int(32));

/// Binary op with the usual promotion: a literal adopts the other side's type; int + float is
/// float; the wider of two ints or floats wins. Comparisons and logic give bool.
Expr Binary(BinaryOp op, Expr a, Expr b);
Expr Not(Expr a);
/// ~a on an integer: a ^ all-ones (there is no separate node; the printer shows `~a`).
Expr BitNot(Expr a);
/// The all-ones value of an integer type (-1 when signed, 2^bits - 1 when unsigned).
Expr AllOnes(DataType t);
Expr Cast(DataType t, Expr a);
Expr Select(Expr c, Expr t, Expr f);
Expr Call(DataType t, const std::string& op, std::vector<Expr> args);
Expr Load(const Buffer& b, std::vector<Expr> indices);
Buffer MakeBuffer(const std::string& name, DataType t, std::vector<Expr> shape, Scope scope, Span span = {});
/// A view of `data`'s storage (see BufferNode::data).
Buffer MakeBufferView(const Buffer& like, const Buffer& data, int64_t byte_offset);

inline Expr operator+(Expr a, Expr b) { return Binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return Binary(BinaryOp::kSub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return Binary(BinaryOp::kMul, std::move(a), std::move(b)); }

/// Returns true and sets *v when e is an integer constant.
bool AsConstInt(const Expr& e, int64_t* v);
inline bool IsConstInt(const Expr& e, int64_t v) {
  int64_t x;
  return AsConstInt(e, &x) && x == v;
}

}  // namespace tl
