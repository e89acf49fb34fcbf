// The C-family printer shared by the CPU and CUDA code generators: names, literals,
// expressions and structured statements. A backend supplies type names, its runtime namespace,
// intrinsic calls, loop pragmas and the kernel scope.
#pragma once
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>

#include "arith/simplify.h"
#include "ir/function.h"
#include "ir/name_table.h"

namespace tl {

/// Keywords of C, C++ and CUDA C++, and the type, builtin-variable and library names that the
/// generated code or its device headers may use: never handed out as a user variable's name.
const std::set<std::string>& CReservedNames();

class CodegenC {
 public:
  virtual ~CodegenC() = default;

 protected:
  int64_t tma_multicast_ = 0;  // inside a tl.tma_multicast attribute: its cluster mask (CUDA's TMA loads)
  /// `(x == y)`, `(x && y)`, ...: the comparisons and logic operators, spelled alike in every C dialect.
  static std::string ComparisonOrLogic(BinaryOp op, const std::string& x, const std::string& y);
  /// & | ^ << >> on integers, spelled alike in every C dialect (docs/semantics.md): the result in
  /// the operands' type, a shift count outside [0, bits) clamped as PTX clamps it, no undefined
  /// behaviour (left shifts in the unsigned type, counts tested before shifting).
  std::string BitwiseE(const BinaryNode* b, const std::string& x, const std::string& y);
  /// T.popcount / T.clz in the operand type's width, through the dialect's 64-bit count functions.
  std::string BitCountE(const CallNode* c, const std::string& popcount64, const std::string& clz64);
  /// `ns` prefixes runtime helpers (cast, floordiv, min_ ...), e.g. "tl_cpu::".
  explicit CodegenC(std::string ns) : ns_(std::move(ns)) {}

  virtual std::string CType(DataType t) = 0;
  /// Whether the dialect computes 16-bit and fp8 float arithmetic in float (our C++ half types convert to
  /// float): the IR's typed result (a float16 product is a float16, as in TileLang) is then rounded to its
  /// type at each operation. MSL's half and bfloat compute in their own type.
  virtual bool NarrowFloatsComputeInFloat() const { return true; }
  virtual std::string InfLiteral(bool negative) = 0;
  virtual std::string NanLiteral() = 0;
  virtual std::string CallE(const CallNode* c);
  /// Integer `/` and `%` (truncating); a backend may route them through helpers that never trap.
  virtual std::string IntDivMod(bool is_div, const std::string& x, const std::string& y, DataType) {
    return "(" + x + (is_div ? " / " : " % ") + y + ")";
  }
  virtual void ForPragma(const ForNode* n, int ind) = 0;
  virtual void Kernel(const KernelNode* n, int ind) = 0;
  virtual void Stmt_(const Stmt& s, int ind);
  /// `tl.buffer_bind` (T.make_tensor of a pointer-table element): the tensor's pointer from the address.
  virtual void BindBuffer(const AttrStmtNode* a, int ind);

  /// A unique C identifier for `key`, derived from `base`.
  std::string Name(const void* key, const std::string& base);
  std::string Name(const VarNode* v) { return Name(v, v->name); }
  /// Flattened row-major offset, in 64-bit arithmetic for global tensors.
  std::string Offset(const Buffer& b, const std::vector<Expr>& idx);
  std::string WideIndex(const Expr& e);
  std::string Lit(const Expr& e);
  virtual std::string E(const Expr& e);
  /// An element as an lvalue (for `&`): a buffer element itself, not its value (an int4 read sign-extends).
  std::string Lvalue(const Expr& e);
  std::string Args(const CallNode* c);
  void Line(int ind, const std::string& s) { os_ << std::string(ind * 2, ' ') << s << "\n"; }

  /// The loop pragma of a T.unroll / vectorized loop on the GPU dialects: "#pragma unroll" while the code
  /// it unrolls to (nested unrolled loops multiplied out) stays within a budget of IR nodes; past it
  /// "#pragma unroll 4", so that a thread holding thousands of elements (a replicated fragment) is not
  /// unrolled into thousands of statements (minutes of NVRTC time).
  static std::string UnrollPragma(const ForNode* n);
  /// `#pragma unroll N` for a serial loop annotated tl.unroll_by = N (the pipelined main loops: N stages,
  /// so that the stage index is a constant in each copy of the body), or "" (no annotation, or a body too
  /// large to copy N times).
  static std::string PartialUnrollPragma(const ForNode* n);
  /// `a` floordiv / floormod `b` printed as a shift, a mask or an unsigned `/` `%` when `b` is a
  /// positive constant and `a` is provably non-negative (empty otherwise).
  std::string NonNegativeDivMod(const BinaryNode* b, const std::string& x);
  /// Ranges of the loop, let and block vars in scope, for NonNegativeDivMod.
  BoundMap bounds_;
  std::set<const VarNode*> unrolled_;  // vars of the enclosing loops the compiler is asked to unroll
  int rolled_loops_ = 0;               // enclosing loops it is not

  std::string ns_;
  std::ostringstream os_;
  /// The source location of the statement (or parameter) being printed, for errors a backend raises
  /// while printing it (an unsupported dtype).
  Span cur_span_;
  // Generated helpers and locals use the tl_ prefix; user names that are C/C++/CUDA keywords or
  // names the generated code and its headers use (`do`, `half`, `float4`, `threadIdx`) get a suffix.
  NameTable names_{CReservedNames(), "tl_", true};
};

}  // namespace tl
