// OpenCL C code generation; see codegen_opencl.h.
#include "target/opencl/codegen_opencl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <map>
#include <set>

#include "ir/functor.h"
#include "target/codegen_c.h"
#include "target/cpu/codegen_cpu.h"
#include "target/cuda/codegen_cuda.h"

namespace tl {
namespace {

// OpenCL C keywords, address-space qualifiers, vector types and the builtins the generated code
// calls: never handed out as a user variable's name (on top of the C/C++/CUDA names).
std::set<std::string> OpenCLReservedNames() {
  std::set<std::string> s = CReservedNames();
  for (const char* n :
       {"kernel", "__kernel", "global", "__global", "local", "__local", "constant", "__constant", "private",
        "__private", "generic", "read_only", "write_only", "read_write", "uchar", "ushort", "uint", "ulong", "half",
        "barrier", "mem_fence", "get_local_id", "get_group_id", "get_global_id", "get_local_size", "get_num_groups",
        "vload2", "vload4", "vload8", "vload16", "vstore2", "vstore4", "vstore8", "vstore16", "float2", "float4",
        "float8", "float16", "double2", "double4", "double8", "int2", "int4", "int8", "int16", "long2", "long4",
        "char2", "char4", "char8", "char16", "short2", "short4", "short8", "half2", "half4", "half8", "half16",
        "fmin", "fmax", "fmod", "rint", "as_uint", "as_float", "as_ulong", "as_double", "atomic_add",
        "atomic_cmpxchg", "atom_add", "atom_cmpxchg", "convert_int", "select", "clamp", "mad", "FLT_MAX", "DBL_MAX",
        "INT_MIN", "INT_MAX", "LONG_MIN", "LONG_MAX", "CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE", "event_t",
        "sampler_t", "image2d_t", "image3d_t", "pipe", "complex", "imaginary"})
    s.insert(n);
  return s;
}

[[noreturn]] void Unsupported(const std::string& what, const Span& sp = {}) {
  throw UserError(ErrorKind::kUnsupported, what, sp);
}

std::string ClType(DataType t) {
  switch (t.code()) {
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kInt:
      switch (t.bits()) {
        case 8: return "char";
        case 16: return "short";
        case 32: return "int";
        case 64: return "long";
      }
      break;
    case DataType::Code::kUInt:
      switch (t.bits()) {
        case 8: return "uchar";
        case 16: return "ushort";
        case 32: return "uint";
        case 64: return "ulong";
      }
      break;
    case DataType::Code::kFloat:
      if (t.bits() == 16) return "half";
      if (t.bits() == 32) return "float";
      if (t.bits() == 64) return "double";
      break;
    case DataType::Code::kHandle: return "void*";
    case DataType::Code::kVoid: return "void";
    default: break;
  }
  Unsupported("the OpenCL backend does not support the dtype " + t.str() +
              " (OpenCL C has no such type; supported: bool, int8-64, uint8-64, float16 with cl_khr_fp16, float32, "
              "float64 with cl_khr_fp64)");
}

// A short type suffix for helper names: i32, u8, f64, ...
std::string Suffix(DataType t) {
  std::string c = t.is_int() ? "i" : t.is_uint() ? "u" : t.is_bool() ? "b" : "f";
  return c + std::to_string(t.bits());
}

class CodegenOpenCLImpl : public CodegenC {
 public:
  CodegenOpenCLImpl(const PrimFunc& f, bool dynamic_index) : CodegenC("tl_"), f_(f), dynamic_index_(dynamic_index) {
    names_ = NameTable(OpenCLReservedNames(), "tl_", true);
  }

  OpenCLSource Run() {
    OpenCLSource out;
    const KernelNode* k = FindKernel(f_->body);
    if (!k) throw InternalError("OpenCL codegen: no kernel scope");
    AsConstInt(k->threads[0], &threads_);
    std::string params;
    for (auto& p : f_->params) {
      if (!params.empty()) params += ", ";
      if (p.buffer) {
        if (p.buffer->dtype.is_bool())
          Unsupported("the OpenCL backend does not take bool tensors (OpenCL kernels cannot take pointers to bool); "
                      "pass the tensor '" + p.buffer->name + "' as uint8 or int8", p.buffer->span);
        params += "__global " + Storage(p.buffer->dtype, Scope::kGlobal) + "* restrict " + Name(p.buffer.get(), p.buffer->name);
      } else {
        if (IsHalf(p.var->dtype))
          Unsupported("the OpenCL backend does not take float16 scalars (OpenCL 1.2 kernels cannot take half "
                      "arguments); declare '" + p.var->name + "' as float32");
        if (p.var->dtype.is_bool())
          Unsupported("the OpenCL backend does not take bool scalars (OpenCL kernel arguments cannot be bool); "
                      "declare '" + p.var->name + "' as int32");
        params += CType(p.var->dtype) + " " + Name(p.var.get());
      }
    }
    for (auto& v : SymbolicVars(f_)) params += (params.empty() ? "" : ", ") + CType(v->dtype) + " " + Name(v.get());
    kernel_name_ = CudaKernelName(f_);
    // The body first: it decides which helpers and extensions the preamble needs.
    std::ostringstream body;
    std::swap(os_, body);
    // __local arrays must be declared at the kernel's outermost scope.
    for (auto& b : k->alloc_buffers)
      if (b->scope == Scope::kShared && !b->data) {
        int64_t count = 0;
        AsConstInt(b->shape[0], &count);
        Line(1, "__local uchar " + Name(b.get(), b->name) + "[" + std::to_string(count) +
                    "] __attribute__((aligned(16)));");
      }
    std::ostringstream rest;
    std::swap(os_, rest);
    Stmt_(f_->body, 1);
    std::swap(os_, rest);
    os_ << rest.str();
    std::swap(os_, body);

    std::ostringstream src;
    src << "// Generated by TileLang-C++ for OpenCL from '" << f_->name << "'.\n";
    if (fp64_) src << "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    if (i64_atomics_) src << "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
    src << "typedef char int8_t;\ntypedef uchar uint8_t;\ntypedef short int16_t;\ntypedef ushort uint16_t;\n"
           "typedef int int32_t;\ntypedef uint uint32_t;\ntypedef long int64_t;\ntypedef ulong uint64_t;\n\n";
    for (auto& h : helpers_) src << h.second << "\n";
    src << "__kernel __attribute__((reqd_work_group_size(" << threads_ << ", 1, 1))) void " << kernel_name_ << "("
        << params << ") {\n"
        << body.str() << "}\n";
    out.source = src.str();
    out.kernel_name = kernel_name_;
    out.uses_fp64 = fp64_;
    out.uses_int64_atomics = i64_atomics_;
    return out;
  }

 private:
  // float16 is a storage format (OpenCL 1.2 core: vload_half / vstore_half_rte, no cl_khr_fp16
  // needed): values compute in float, as on CUDA, and round to half where they are stored or cast.
  static bool IsHalf(DataType t) { return t.code() == DataType::Code::kFloat && t.bits() == 16; }
  std::string Storage(DataType t, Scope sc) {
    if (IsHalf(t)) return sc == Scope::kGlobal || sc == Scope::kShared ? "half" : "float";
    return CType(t);
  }
  // float16 in memory (global, shared) is half; in registers it is float holding a value rounded to
  // half (rounded where it is stored, unless it is a half already).
  static bool InMemory(const Buffer& b) { return b->scope == Scope::kGlobal || b->scope == Scope::kShared; }
  std::string HalfPtr(const Buffer& b, const std::vector<Expr>& idx) {
    return "&" + Name(b.get(), b->name) + "[" + Offset(b, idx) + "]";
  }
  static bool ExactHalf(const Expr& e) {
    if (auto* l = As<BufferLoadNode>(e)) return IsHalf(l->buffer->dtype);
    if (auto* c = As<CastNode>(e)) return IsHalf(c->dtype);
    if (auto* sel = As<SelectNode>(e)) return ExactHalf(sel->true_value) && ExactHalf(sel->false_value);
    return e->kind == ExprKind::kFloatImm;
  }
  std::string RoundHalf(const std::string& x) {
    Helper("tl_round_half", "float tl_round_half(float x) {\n  ushort h;\n  vstore_half_rte(x, 0, (half*)&h);\n"
                            "  return vload_half(0, (half*)&h);\n}\n");
    return "tl_round_half(" + x + ")";
  }

  std::string CType(DataType t) override {
    if (IsHalf(t)) return "float";
    if (t.code() == DataType::Code::kFloat && t.bits() == 64) fp64_ = true;
    return ClType(t);
  }
  std::string InfLiteral(bool neg) override { return neg ? "(-INFINITY)" : "INFINITY"; }
  std::string NanLiteral() override { return "NAN"; }
  void ForPragma(const ForNode* n, int ind) override {
    if (n->for_kind == ForKind::kUnrolled || n->for_kind == ForKind::kVectorized) Line(ind, "#pragma unroll");
  }

  void Helper(const std::string& name, const std::string& code) { helpers_.emplace(name, code); }

  // Integer `/`, `%`, `//`, `%%` through helpers with the IR's semantics (docs/semantics.md): by
  // zero gives 0, the most negative value over -1 wraps; never a trap (a CPU device would SIGFPE).
  std::string IntHelper(const std::string& op, DataType t, const std::string& x, const std::string& y) {
    std::string T = CType(t), s = Suffix(t), n = "tl_" + op + "_" + s;
    bool sgn = t.is_int();
    std::string neg1 = sgn ? "  if (b == (" + T + ")(-1)) return (" + T + ")(0 - (ulong)a);\n" : "";
    if (op == "div") {
      Helper(n, T + " " + n + "(" + T + " a, " + T + " b) {\n  if (b == 0) return 0;\n" + neg1 + "  return a / b;\n}\n");
    } else if (op == "mod") {
      Helper(n, T + " " + n + "(" + T + " a, " + T + " b) {\n  if (b == 0) return 0;\n" +
                    (sgn ? "  if (b == (" + T + ")(-1)) return 0;\n" : std::string()) + "  return a % b;\n}\n");
    } else if (op == "floordiv") {
      Helper(n, T + " " + n + "(" + T + " a, " + T + " b) {\n  if (b == 0) return 0;\n" + neg1 + "  " + T +
                    " q = a / b;\n" +
                    (sgn ? "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n" : "  return q;\n") + "}\n");
    } else {  // floormod
      IntHelper("floordiv", t, "", "");
      Helper(n, T + " " + n + "(" + T + " a, " + T + " b) {\n  if (b == 0) return 0;\n  return a - tl_floordiv_" + s +
                    "(a, b) * b;\n}\n");
    }
    return n + "(" + x + ", " + y + ")";
  }

  std::string Literal(const Expr& e) {
    if (auto* i = As<IntImmNode>(e)) {
      DataType t = e->dtype;
      if (t.is_bool()) return i->value ? "true" : "false";
      if (t.is_uint() && t.bits() == 64) return "((ulong)" + std::to_string(static_cast<uint64_t>(i->value)) + "UL)";
      if (i->value == std::numeric_limits<int64_t>::min()) return "((" + CType(t) + ")(-9223372036854775807L - 1L))";
      if (t == DataType::Int(32)) return i->value == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(i->value);
      if (t.bits() == 64) return "((" + CType(t) + ")" + std::to_string(i->value) + "L)";
      return "((" + CType(t) + ")" + std::to_string(i->value) + ")";
    }
    auto* f = As<FloatImmNode>(e);
    DataType t = e->dtype;
    std::string T = CType(t);
    if (std::isinf(f->value)) return "((" + T + ")" + InfLiteral(f->value < 0) + ")";
    if (std::isnan(f->value)) return "((" + T + ")NAN)";
    std::ostringstream os;
    os << std::setprecision(std::numeric_limits<double>::max_digits10) << f->value;
    std::string v = os.str();
    if (v.find_first_of(".e") == std::string::npos) v += ".0";
    if (t.bits() == 64) return v;
    if (t.bits() == 32) return v + "f";
    return RoundHalf(v + "f");
  }

  std::string E(const Expr& e) override {
    switch (e->kind) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm: return Literal(e);
      case ExprKind::kBufferLoad: {
        auto* l = static_cast<const BufferLoadNode*>(e.get());
        if (IsHalf(l->buffer->dtype) && InMemory(l->buffer)) return "vload_half(0, " + HalfPtr(l->buffer, l->indices) + ")";
        return CodegenC::E(e);
      }
      case ExprKind::kBinary: return BinaryE(static_cast<const BinaryNode*>(e.get()));
      case ExprKind::kSelect: {
        if (std::string r = RegisterSelect(e); !r.empty()) return r;
        auto* sel = static_cast<const SelectNode*>(e.get());  // float16 values are floats: no conversions
        std::string r = "(" + E(sel->cond) + " ? " + E(sel->true_value) + " : " + E(sel->false_value) + ")";
        // C's conditional operator promotes narrow integers to int; the IR's select keeps its type.
        return sel->dtype.is_integer() && sel->dtype.bits() < 32 ? "((" + CType(sel->dtype) + ")" + r + ")" : r;
      }
      case ExprKind::kCast: {
        auto* c = static_cast<const CastNode*>(e.get());
        DataType to = c->dtype, from = c->value->dtype;
        std::string x = E(c->value);
        if (to == from) return x;
        if (to.is_bool()) return "((" + x + ") != 0)";
        if (IsHalf(to)) return RoundHalf("(float)(" + x + ")");
        // Float to integer truncates toward zero and saturates; NaN gives 0 (docs/semantics.md).
        if (to.is_integer() && from.code() == DataType::Code::kFloat) return "convert_" + CType(to) + "_sat_rtz(" + x + ")";
        return "((" + CType(to) + ")(" + x + "))";
      }
      default: return CodegenC::E(e);
    }
  }

  // The lowering reads a register whose index depends on the thread as a select chain over the
  // register array, `i == k0 ? r[k0] : (i == k1 ? r[k1] : ... r[kl])`. Printed as one indexed read
  // `r[(i == k0 || i == k1 || ...) ? i : kl]` (the same value for every i) when
  // `dynamic_register_index` is set: PoCL's vectorising work-group method (loopvec) computed
  // wrong values for such chains in some work-items. Returns "" when `e` is not such a chain.
  std::string RegisterSelect(const Expr& e) {
    if (!dynamic_index_) return "";
    const BufferNode* buf = nullptr;
    std::string idx, keys;
    std::vector<int64_t> ks;
    Expr cur = e;
    while (auto* sel = As<SelectNode>(cur)) {
      auto* eq = As<BinaryNode>(sel->cond);
      auto* ld = As<BufferLoadNode>(sel->true_value);
      int64_t k, j;
      if (!eq || eq->op != BinaryOp::kEQ || !ld || ld->indices.size() != 1 || !AsConstInt(eq->b, &k) ||
          !AsConstInt(ld->indices[0], &j) || j != k || ld->buffer->scope != Scope::kLocal || (buf && buf != ld->buffer.get()))
        return "";
      std::string x = E(eq->a);
      if (!idx.empty() && x != idx) return "";
      idx = x;
      buf = ld->buffer.get();
      ks.push_back(k);
      cur = sel->false_value;
    }
    auto* last = As<BufferLoadNode>(cur);
    int64_t kl;
    if (!buf || !last || last->buffer.get() != buf || last->indices.size() != 1 || !AsConstInt(last->indices[0], &kl))
      return "";
    std::string name = Name(buf, buf->name);
    std::sort(ks.begin(), ks.end());
    bool dense = kl == static_cast<int64_t>(ks.size());
    for (size_t i = 0; i < ks.size() && dense; ++i) dense = ks[i] == static_cast<int64_t>(i);
    if (dense)  // keys 0 .. kl-1: any other index reads r[kl]
      return name + "[min((uint)(" + idx + "), " + std::to_string(kl) + "u)]";
    for (auto k : ks) keys += (keys.empty() ? "" : " || ") + std::string("(") + idx + ") == " + std::to_string(k);
    return name + "[(" + keys + ") ? (" + idx + ") : " + std::to_string(kl) + "]";
  }

  std::string BinaryE(const BinaryNode* b) {
    std::string x = E(b->a), y = E(b->b);
    DataType t = b->a->dtype, rt = b->dtype;
    bool fl = t.code() == DataType::Code::kFloat;
    std::string r;
    switch (b->op) {
      case BinaryOp::kAdd: r = "(" + x + " + " + y + ")"; break;
      case BinaryOp::kSub: r = "(" + x + " - " + y + ")"; break;
      case BinaryOp::kMul: r = "(" + x + " * " + y + ")"; break;
      case BinaryOp::kDiv: r = fl ? "(" + x + " / " + y + ")" : IntHelper("div", t, x, y); break;
      case BinaryOp::kMod: r = fl ? "fmod(" + x + ", " + y + ")" : IntHelper("mod", t, x, y); break;
      case BinaryOp::kFloorDiv: r = fl ? "floor(" + x + " / " + y + ")" : IntHelper("floordiv", t, x, y); break;
      case BinaryOp::kFloorMod:
        r = fl ? "(" + x + " - floor(" + x + " / " + y + ") * " + y + ")" : IntHelper("floormod", t, x, y);
        break;
      // (both operands converted to the op's type: C's promotions would make an overload ambiguous)
      case BinaryOp::kMin:
        r = fl ? "fmin(" + x + ", " + y + ")" : "min((" + CType(t) + ")(" + x + "), (" + CType(t) + ")(" + y + "))";
        break;
      case BinaryOp::kMax:
        r = fl ? "fmax(" + x + ", " + y + ")" : "max((" + CType(t) + ")(" + x + "), (" + CType(t) + ")(" + y + "))";
        break;
      case BinaryOp::kEQ: return "(" + x + " == " + y + ")";
      case BinaryOp::kNE: return "(" + x + " != " + y + ")";
      case BinaryOp::kLT: return "(" + x + " < " + y + ")";
      case BinaryOp::kLE: return "(" + x + " <= " + y + ")";
      case BinaryOp::kGT: return "(" + x + " > " + y + ")";
      case BinaryOp::kGE: return "(" + x + " >= " + y + ")";
      case BinaryOp::kAnd: return "(" + x + " && " + y + ")";
      case BinaryOp::kOr: return "(" + x + " || " + y + ")";
    }
    // C promotes integers narrower than int; the IR's arithmetic wraps at the type's width.
    if (rt.is_integer() && rt.bits() < 32) return "((" + CType(rt) + ")" + r + ")";
    return r;
  }

  // Address space of a buffer element's address.
  static bool IsGlobal(const Expr& e) {
    auto* l = As<BufferLoadNode>(e);
    return l && l->buffer->scope == Scope::kGlobal;
  }
  static bool IsShared(const Expr& e) {
    auto* l = As<BufferLoadNode>(e);
    return l && l->buffer->scope == Scope::kShared;
  }

  std::string Addr(const Expr& e) {
    auto* l = As<BufferLoadNode>(e);
    if (l && IsHalf(l->buffer->dtype) && InMemory(l->buffer)) return "(" + HalfPtr(l->buffer, l->indices) + ")";
    return "(&" + E(e) + ")";
  }

  std::string AtomicAdd(const CallNode* c) {
    DataType t = c->args[0]->dtype;
    std::string space = IsGlobal(c->args[0]) ? "__global" : IsShared(c->args[0]) ? "__local" : "";
    if (space.empty()) Unsupported("T.atomic_add on OpenCL needs a global or shared destination");
    std::string T = CType(t), n = "tl_atomic_add_" + Suffix(t) + (space == "__global" ? "_g" : "_l");
    std::string p = "volatile " + space + " " + T + "* p";
    if (t == DataType::Int(32) || t == DataType::UInt(32)) {
      Helper(n, "void " + n + "(" + p + ", " + T + " v) { atomic_add(p, v); }\n");
    } else if (t == DataType::Int(64) || t == DataType::UInt(64)) {
      i64_atomics_ = true;
      Helper(n, "void " + n + "(" + p + ", " + T + " v) { atom_add(p, v); }\n");
    } else if (t == DataType::Float(32)) {
      Helper(n, "void " + n + "(" + p + ", float v) {\n  volatile " + space +
                    " uint* q = (volatile " + space + " uint*)p;\n  uint old = *q, assumed;\n  do {\n    assumed = old;\n"
                    "    old = atomic_cmpxchg(q, assumed, as_uint(as_float(assumed) + v));\n  } while (old != assumed);\n}\n");
    } else if (t == DataType::Float(64)) {
      i64_atomics_ = true;
      Helper(n, "void " + n + "(" + p + ", double v) {\n  volatile " + space +
                    " ulong* q = (volatile " + space + " ulong*)p;\n  ulong old = *q, assumed;\n  do {\n    assumed = old;\n"
                    "    old = atom_cmpxchg(q, assumed, as_ulong(as_double(assumed) + v));\n  } while (old != assumed);\n}\n");
    } else {
      Unsupported("T.atomic_add on OpenCL supports int32, uint32, int64, uint64, float32 and float64; got " + t.str());
    }
    std::string v = E(c->args[1]);
    if (c->args[1]->dtype != t) v = "((" + T + ")(" + v + "))";
    return n + "(" + Addr(c->args[0]) + ", " + v + ")";
  }

  std::string CallE(const CallNode* c) override {
    const std::string& op = c->op;
    auto arg = [&](size_t i) { return E(c->args[i]); };
    if (op == "tl.thread_idx") return "((int)get_local_id(0))";
    if (op == "tl.syncthreads") return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)";
    if (op == "tl.bitwise_xor") return "(" + arg(0) + " ^ " + arg(1) + ")";
    if (op == "tl.shfl_xor")
      throw InternalError("tl.shfl_xor reached the OpenCL code generator; the OpenCL lowering reduces through "
                          "local memory (no sub-groups are assumed)");
    if (op == "tl.atomic_add") return AtomicAdd(c);
    if (op == "tl.vector_store") {  // (dst, lane values...)
      size_t V = c->args.size() - 1;
      std::string T = CType(c->args[0]->dtype), vals;
      for (size_t i = 1; i < c->args.size(); ++i) vals += (i > 1 ? ", " : "") + arg(i);
      if (IsHalf(c->args[0]->dtype)) {
        auto* d = As<BufferLoadNode>(c->args[0]);
        return "vstore_half" + std::to_string(V) + "_rte((float" + std::to_string(V) + ")(" + vals + "), 0, " +
               HalfPtr(d->buffer, d->indices) + ")";
      }
      return "vstore" + std::to_string(V) + "((" + T + std::to_string(V) + ")(" + vals + "), 0, " + Addr(c->args[0]) + ")";
    }
    if (op == "tl.vector_load") {  // (dst registers, src, lanes, valid)
      int64_t V = 0;
      AsConstInt(c->args[2], &V);
      std::string T = CType(c->args[1]->dtype), N = std::to_string(V);
      std::string dst = Addr(c->args[0]);
      std::string ld = "vstore" + N + "(vload" + N + "(0, " + Addr(c->args[1]) + "), 0, " + dst + ")";
      int64_t always;
      if (AsConstInt(c->args[3], &always) && always) return ld;
      return "((" + arg(3) + ") ? " + ld + " : vstore" + N + "((" + T + N + ")(0), 0, " + dst + "))";
    }
    if (op == "min_value" || op == "max_value") {
      DataType t = c->dtype;
      bool lo = op == "min_value";
      if (t == DataType::Float(32)) return lo ? "(-FLT_MAX)" : "FLT_MAX";
      if (t == DataType::Float(64)) return lo ? "(-DBL_MAX)" : "DBL_MAX";
      if (IsHalf(t)) return lo ? "(-65504.0f)" : "65504.0f";
      if (t.is_uint()) return lo ? "((" + CType(t) + ")0)" : "((" + CType(t) + ")(~(" + CType(t) + ")0))";
      if (t.is_int()) {
        static const std::map<int, std::pair<std::string, std::string>> lim = {
            {8, {"CHAR_MIN", "CHAR_MAX"}}, {16, {"SHRT_MIN", "SHRT_MAX"}}, {32, {"INT_MIN", "INT_MAX"}},
            {64, {"LONG_MIN", "LONG_MAX"}}};
        auto it = lim.find(t.bits());
        if (it != lim.end()) return "((" + CType(t) + ")" + (lo ? it->second.first : it->second.second) + ")";
      }
      Unsupported("T." + op + " of " + t.str() + " on OpenCL");
    }
    if (op == "address_of") return Addr(c->args[0]);
    if (op == "print") {
      // printf of OpenCL C 1.2; the value is printed as a double where the device has fp64.
      return "printf(\"%s%g\\n\", " + arg(0) + ", (float)(" + arg(1) + "))";
    }
    if (op == "device_assert")
      Unsupported("T.device_assert is not supported by the OpenCL backend (OpenCL C has no trap); use the CUDA "
                  "emulator to check assertions");
    bool fl = !c->args.empty() && c->args[0]->dtype.code() == DataType::Code::kFloat;
    static const std::set<std::string> same{"exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sin",
                                            "cos", "floor", "ceil", "trunc", "erf", "pow", "fma"};
    if (same.count(op)) return op + "(" + Args(c) + ")";
    if (op == "round") return "rint(" + arg(0) + ")";  // half to even, like NumPy and the other backends
    if (op == "abs") return fl ? "fabs(" + arg(0) + ")" : "((" + CType(c->dtype) + ")abs(" + arg(0) + "))";
    if (op == "sigmoid") {
      std::string one = c->dtype.bits() == 64 ? "1.0" : "1.0f";
      return "(" + one + " / (" + one + " + exp(-(" + arg(0) + "))))";
    }
    Unsupported("the OpenCL backend has no lowering for '" + op + "' yet");
  }

  // A vector load into registers: one vloadN, then the lanes into the register array one by one.
  void Stmt_(const Stmt& s, int ind) override {
    auto* ev = s && s->kind == StmtKind::kEvaluate ? As<EvaluateNode>(s) : nullptr;
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    if (s && s->kind == StmtKind::kStore) {
      auto* st = As<StoreNode>(s);
      if (IsHalf(st->buffer->dtype) && InMemory(st->buffer)) {
        Line(ind, "vstore_half_rte(" + E(st->value) + ", 0, " + HalfPtr(st->buffer, st->indices) + ");");
        return;
      }
      if (IsHalf(st->buffer->dtype) && !ExactHalf(st->value)) {
        Line(ind, Name(st->buffer.get(), st->buffer->name) + "[" + Offset(st->buffer, st->indices) + "] = " +
                      RoundHalf(E(st->value)) + ";");
        return;
      }
    }
    if (!c || c->op != "tl.vector_load") return CodegenC::Stmt_(s, ind);
    int64_t V = 0;
    AsConstInt(c->args[2], &V);
    auto* dst = As<BufferLoadNode>(c->args[0]);
    TL_ICHECK(dst, "tl.vector_load needs a register destination");
    bool half = IsHalf(c->args[1]->dtype);
    std::string T = CType(c->args[1]->dtype), N = std::to_string(V);
    std::string base = Name(dst->buffer.get(), dst->buffer->name) + "[" + Offset(dst->buffer, dst->indices) + " + ";
    static const char* lanes = "0123456789abcdef";
    int64_t always = 0;
    bool guarded = !(AsConstInt(c->args[3], &always) && always);
    Line(ind, "{");
    std::string vec = std::string(half ? "vload_half" : "vload") + N + "(0, " + Addr(c->args[1]) + ")";
    Line(ind + 1, "const " + T + N + " tl_v = " + (guarded ? "(" + E(c->args[3]) + ") ? " + vec + " : (" + T + N + ")(0)" : vec) + ";");
    for (int64_t j = 0; j < V; ++j) Line(ind + 1, base + std::to_string(j) + "] = tl_v.s" + lanes[j] + ";");
    Line(ind, "}");
  }

  void Kernel(const KernelNode* n, int ind) override {
    for (size_t i = 0; i < n->block_vars.size(); ++i)
      Line(ind, "const int " + Name(n->block_vars[i].get()) + " = (int)get_group_id(" + std::to_string(i) + ");");
    for (auto& b : n->alloc_buffers) {
      int64_t count = 1;
      AsConstInt(b->shape[0], &count);
      if (b->scope == Scope::kShared && !b->data) {
        TL_ICHECK(b->dtype == DataType::UInt(8), "shared buffer '" + b->name + "' was not placed by PlanSharedMemory");
        continue;  // declared at the kernel's top (Run)
      }
      if (b->scope == Scope::kShared) {
        // No `restrict`: PlanSharedMemory lets buffers with disjoint lifetimes share bytes.
        Line(ind, "__local " + Storage(b->dtype, Scope::kShared) + "* " + Name(b.get(), b->name) + " = (__local " +
                      Storage(b->dtype, Scope::kShared) + "*)(" + Name(b->data.get(), b->data->name) + " + " +
                      std::to_string(b->byte_offset) + ");");
      } else {
        Line(ind, Storage(b->dtype, Scope::kLocal) + " " + Name(b.get(), b->name) + "[" + std::to_string(count) + "];");
      }
    }
    for (auto& kv : n->var_inits) {
      if (IsHalf(kv.first->dtype) && !ExactHalf(kv.second))
        Line(ind, Name(kv.first.get(), kv.first->name) + "[0] = " + RoundHalf(E(kv.second)) + ";");
      else
        Line(ind, Name(kv.first.get(), kv.first->name) + "[0] = " + E(kv.second) + ";");
    }
    Stmt_(n->body, ind);
  }

  PrimFunc f_;
  bool dynamic_index_ = false;
  std::string kernel_name_;
  int64_t threads_ = 1;
  bool fp64_ = false, i64_atomics_ = false;
  std::map<std::string, std::string> helpers_;  // by name: each emitted once, in name order
};

}  // namespace

OpenCLSource CodegenOpenCL(const PrimFunc& f, bool dynamic_register_index) {
  return CodegenOpenCLImpl(f, dynamic_register_index).Run();
}

}  // namespace tl
