// Metal Shading Language code generation; see codegen_metal.h.
#include "target/metal/codegen_metal.h"

#include <map>
#include <set>

#include "ir/functor.h"
#include "target/codegen_c.h"
#include "ir/params.h"
#include "target/cuda/codegen_cuda.h"

namespace tl {
namespace {

[[noreturn]] void Unsupported(const std::string& what, const Span& sp = {}) {
  throw UserError(ErrorKind::kUnsupported, what, sp);
}

// MSL's scalar type names (MSL 3.1: bfloat; the stdint aliases are MSL types too).
std::string MslType(DataType t) {
  switch (t.code()) {
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kInt: return t.bits() <= 8 ? "int8_t" : "int" + std::to_string(t.bits()) + "_t";
    case DataType::Code::kUInt: return t.bits() <= 8 ? "uint8_t" : "uint" + std::to_string(t.bits()) + "_t";
    case DataType::Code::kFloat:
      if (t.bits() == 16) return "half";
      if (t.bits() == 32) return "float";
      break;
    case DataType::Code::kBFloat: return "bfloat";
    default: break;
  }
  Unsupported("the Metal backend cannot express the dtype " + t.str());
}

// Names MSL reserves (keywords, address spaces, types, the builtins the generated code calls).
std::set<std::string> MetalReservedNames() {
  std::set<std::string> s = CReservedNames();
  for (const char* n : {"kernel",
                        "vertex",
                        "fragment",
                        "device",
                        "constant",
                        "threadgroup",
                        "thread",
                        "threadgroup_imageblock",
                        "ray_data",
                        "object_data",
                        "metal",
                        "half",
                        "bfloat",
                        "uchar",
                        "ushort",
                        "uint",
                        "ulong",
                        "simd",
                        "simdgroup_float8x8",
                        "simdgroup_half8x8",
                        "simdgroup_bfloat8x8",
                        "simdgroup_matrix",
                        "simdgroup_load",
                        "simdgroup_store",
                        "simdgroup_multiply_accumulate",
                        "simd_shuffle_xor",
                        "simd_sum",
                        "threadgroup_barrier",
                        "simdgroup_barrier",
                        "mem_flags",
                        "atomic_int",
                        "atomic_uint",
                        "atomic_float",
                        "atomic_fetch_add_explicit",
                        "memory_order_relaxed",
                        "ulong2",
                        "uint3",
                        "precise",
                        "fast",
                        "rint",
                        "rsqrt",
                        "fmod",
                        "fmin",
                        "fmax",
                        "select",
                        "tl",
                        "mpp",
                        "tensor",
                        "INFINITY",
                        "NAN",
                        "MAXFLOAT",
                        "MAXHALF"})
    s.insert(n);
  return s;
}

class CodegenMetalImpl : public CodegenC {
 public:
  explicit CodegenMetalImpl(const PrimFunc& f) : CodegenC("tl::"), f_(f) {
    names_ = NameTable(MetalReservedNames(), "tl_", true);
  }

  std::string Run() {
    const KernelNode* k = FindKernel(f_->body);
    if (!k) throw InternalError("Metal codegen: no kernel scope");
    FindMatrices(f_->body);
    FindCoops(f_->body);
    std::string params;
    int slot = 0;
    for (auto& p : f_->params) {
      if (!params.empty()) params += ",\n    ";
      if (p.buffer) {
        params += "device " + CType(p.buffer->dtype) + "* " + Name(p.buffer.get(), p.buffer->name);
      } else {
        if (p.var->dtype.is_bool())
          Unsupported(
              "the Metal backend does not take bool scalars (a bool kernel argument has no defined size "
              "in a Metal buffer); declare '" +
              p.var->name + "' as int32");
        params += "constant " + CType(p.var->dtype) + "& " + Name(p.var.get());
      }
      params += " [[buffer(" + std::to_string(slot++) + ")]]";
    }
    for (auto& v : SymbolicVars(f_))
      params += std::string(params.empty() ? "" : ",\n    ") + "constant " + CType(v->dtype) + "& " +
                Name(v.get()) + " [[buffer(" + std::to_string(slot++) + ")]]";
    params +=
        std::string(params.empty() ? "" : ",\n    ") + "uint3 tl_group_id [[threadgroup_position_in_grid]]";
    params += ",\n    uint3 tl_thread_id [[thread_position_in_threadgroup]]";
    std::ostringstream body;
    std::swap(os_, body);
    // Threadgroup arrays must be declared at the kernel function's outermost scope.
    for (auto& b : k->alloc_buffers)
      if (b->scope == Scope::kShared && !b->data) {
        // The kernel's one threadgroup byte buffer (PlanSharedMemory), 16-byte aligned.
        TL_ICHECK(b->dtype == DataType::UInt(8),
                  "shared buffer '" + b->name + "' was not placed by PlanSharedMemory");
        int64_t count = 0;
        AsConstInt(b->shape[0], &count);
        std::string nm = Name(b.get(), b->name);
        Line(1, "threadgroup float4 " + nm + "_storage[" + std::to_string((count + 15) / 16) + "];");
        Line(1, "threadgroup uint8_t* " + nm + " = (threadgroup uint8_t*)" + nm + "_storage;");
      }
    Stmt_(f_->body, 1);
    std::swap(os_, body);

    std::ostringstream src;
    src << "// Generated by TileLang-C++ for Metal from '" << f_->name << "'.\n";
    src << "#include <metal_stdlib>\n";
    if (!matrices_.empty()) src << "#include <metal_simdgroup_matrix>\n";
    if (!coops_.empty())
      src << "#include <metal_tensor>\n#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n";
    src << "using namespace metal;\n";
    if (bfloat_)
      src << "#if defined(__METAL_VERSION__) && __METAL_VERSION__ < 310\n#error \"bfloat16 needs Metal "
             "3.1\"\n"
             "#endif\n";
    src << "\nnamespace tl {\n"
           "template <typename T, typename U> inline T cast(U x) { return static_cast<T>(x); }\n"
           "// Integer division and modulo by zero give 0 (docs/semantics.md), never undefined behaviour.\n"
           "template <typename T> inline T div_(T a, T b) { return b == T(0) ? T(0) : a / b; }\n"
           "template <typename T> inline T mod_(T a, T b) { return b == T(0) ? T(0) : a % b; }\n"
           "template <typename T> inline T floordiv(T a, T b) {\n"
           "  if (b == T(0)) return T(0);\n"
           "  T q = a / b;\n"
           "  return (q * b != a && ((a < T(0)) != (b < T(0)))) ? q - T(1) : q;\n"
           "}\n"
           "inline float floordiv(float a, float b) { return metal::floor(a / b); }\n"
           "inline half floordiv(half a, half b) { return metal::floor(a / b); }\n"
           "template <typename T> inline T floormod(T a, T b) { return a - floordiv(a, b) * b; }\n"
           "template <typename T> inline T min_(T a, T b) { return b < a ? b : a; }\n"
           "template <typename T> inline T max_(T a, T b) { return a < b ? b : a; }\n"
           "template <typename T> inline T fmod_(T a, T b) { return metal::fmod(a, b); }\n";
    for (auto& h : helpers_) src << h.second;
    if (!coops_.empty()) src << kCoopHelpers;
    src << "}  // namespace tl\n\n";
    src << "kernel void " << CudaKernelName(f_) << "(\n    " << params << ") {\n" << body.str() << "}\n";
    return src.str();
  }

 private:
  std::string CType(DataType t) override {
    if (t.code() == DataType::Code::kBFloat) bfloat_ = true;
    return MslType(t);
  }
  bool NarrowFloatsComputeInFloat() const override { return false; }  // half and bfloat are native
  std::string InfLiteral(bool neg) override { return neg ? "(-INFINITY)" : "INFINITY"; }
  std::string NanLiteral() override { return "NAN"; }
  void ForPragma(const ForNode* n, int ind) override {
    if (n->for_kind == ForKind::kUnrolled || n->for_kind == ForKind::kVectorized) Line(ind, UnrollPragma(n));
  }
  std::string IntDivMod(bool is_div, const std::string& x, const std::string& y, DataType t) override {
    return std::string("tl::") + (is_div ? "div_" : "mod_") + "<" + CType(t) + ">(" + x + ", " + y + ")";
  }

  // ---- address spaces ------------------------------------------------------------------------
  static const char* Space(const Buffer& b) {
    switch (b->scope) {
      case Scope::kGlobal: return "device";
      case Scope::kShared: return "threadgroup";
      default: return "thread";
    }
  }
  std::string Addr(const Expr& e) { return "(&" + Lvalue(e) + ")"; }

  // ---- simdgroup matrices --------------------------------------------------------------------
  // The local buffers the simdgroup calls name as matrices (2 IR elements per 8x8 matrix).
  void FindMatrices(const Stmt& s) {
    PostOrderVisitStmt(s, [&](const Stmt& x) {
      auto* ev = x->kind == StmtKind::kEvaluate ? As<EvaluateNode>(x) : nullptr;
      auto* c = ev ? As<CallNode>(ev->value) : nullptr;
      if (!c || c->op.rfind("tl.simdgroup_", 0) != 0) return;
      std::vector<size_t> mats = c->op == "tl.simdgroup_load"    ? std::vector<size_t>{0}
                                 : c->op == "tl.simdgroup_store" ? std::vector<size_t>{1}
                                                                 : std::vector<size_t>{0, 1, 2, 3};
      for (size_t i : mats)
        if (auto* l = i < c->args.size() ? As<BufferLoadNode>(c->args[i]) : nullptr)
          matrices_.insert(l->buffer.get());
    });
  }
  std::string MatrixType(DataType t) {
    if (t == DataType::Float(32)) return "simdgroup_float8x8";
    if (t == DataType::Float(16)) return "simdgroup_half8x8";
    if (t == DataType::BFloat16()) {
      bfloat_ = true;
      return "simdgroup_bfloat8x8";
    }
    Unsupported("simdgroup matrices hold float32, float16 or bfloat16, not " + t.str());
  }
  // `M[2 * t]` -> `M[t]`.
  std::string Matrix(const Expr& e) {
    auto* l = As<BufferLoadNode>(e);
    TL_ICHECK(l && matrices_.count(l->buffer.get()) && l->indices.size() == 1, "a simdgroup matrix operand");
    int64_t i = 0;
    std::string idx =
        AsConstInt(l->indices[0], &i) ? std::to_string(i / 2) : "(" + E(l->indices[0]) + ") / 2";
    return Name(l->buffer.get(), l->buffer->name) + "[" + idx + "]";
  }

  // ---- Metal 4 cooperative tensors -----------------------------------------------------------------
  // The local buffers the tl.coop_* calls name as cooperative tensors
  // (src/target/metal/lower_gemm_simdgroup.cc): `E` IR elements (one lane's share) per tensor, of the
  // matmul2d(m, n, k, ta, tb) operation, role 0 (left operand) or 2 (destination). Arguments: coop_load
  // (T[e], mem[origin], stride, role, m, n, k, ta, tb), coop_store (mem[origin], T[e], stride, role, ...),
  // coop_mma (D[e], A[e], B[origin], b_stride, m, n, k, ta, tb).
  struct Coop {
    int64_t role = 0, m = 0, n = 0, k = 0, ta = 0, tb = 0;
    DataType ab, c;
    int64_t per() const { return role == 0 ? m * k / 32 : m * n / 32; }
    std::string Desc() const {
      return std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + ", " +
             (ta ? "true" : "false") + ", " + (tb ? "true" : "false");
    }
  };
  static constexpr const char* kCoopHelpers =
      "// Metal 4 tensor operations (MSL 4.0, MetalPerformancePrimitives): threadgroup tiles as tensors, "
      "the\n"
      "// matmul2d operation one SIMD-group runs, and its cooperative tensors.\n"
      "template <typename T> using tg_tensor = metal::tensor<threadgroup T, metal::dextents<int32_t, 2>, "
      "metal::tensor_inline>;\n"
      "// `rows` rows of `cols` elements, `stride` elements apart (extents innermost first)\n"
      "template <typename T> inline tg_tensor<T> tg_view(threadgroup T* p, int32_t cols, int32_t rows, "
      "int32_t "
      "stride) {\n"
      "  return tg_tensor<T>(p, metal::dextents<int32_t, 2>(cols, rows), metal::array<int32_t, 2>({1, "
      "stride}));\n"
      "}\n"
      "template <int M, int N, int K, bool TA, bool TB> using mm_op = mpp::tensor_ops::matmul2d<\n"
      "    mpp::tensor_ops::matmul2d_descriptor(M, N, K, TA, TB, false,\n"
      "                                         "
      "mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate),\n"
      "    metal::execution_simdgroup>;\n"
      "template <int M, int N, int K, bool TA, bool TB, typename AB, typename CT> struct coop {\n"
      "  static auto left() {\n"
      "    return mm_op<M, N, K, TA, TB>().template get_left_input_cooperative_tensor<tg_tensor<AB>, "
      "tg_tensor<AB>, "
      "CT>();\n"
      "  }\n"
      "  static auto dest() {\n"
      "    return mm_op<M, N, K, TA, TB>().template get_destination_cooperative_tensor<tg_tensor<AB>, "
      "tg_tensor<AB>, CT>();\n"
      "  }\n"
      "};\n";
  void FindCoops(const Stmt& s) {
    PostOrderVisitStmt(s, [&](const Stmt& x) {
      auto* ev = x->kind == StmtKind::kEvaluate ? As<EvaluateNode>(x) : nullptr;
      auto* c = ev ? As<CallNode>(ev->value) : nullptr;
      if (!c || c->op.rfind("tl.coop_", 0) != 0) return;
      TL_ICHECK(c->args.size() == 9, "a tl.coop_ call has 9 arguments");
      int64_t v[5];
      for (int i = 0; i < 5; ++i)
        TL_ICHECK(AsConstInt(c->args[4 + i], &v[i]), "a constant matmul2d descriptor");
      auto note = [&](size_t i, int64_t role, DataType ab, DataType ct) {
        auto* l = As<BufferLoadNode>(c->args[i]);
        TL_ICHECK(l && l->buffer->scope == Scope::kLocal, "a cooperative tensor operand is a local buffer");
        Coop k{role, v[0], v[1], v[2], v[3], v[4], ab, ct};
        auto [it, fresh] = coops_.emplace(l->buffer.get(), k);
        TL_ICHECK(fresh || (it->second.role == role && it->second.Desc() == k.Desc()),
                  "buffer '" + l->buffer->name + "' holds cooperative tensors of two kinds");
        if (!it->second.c.bits()) it->second.c = ct;  // a left operand's destination type, from its run
      };
      auto mem_t = [&](size_t i) { return As<BufferLoadNode>(c->args[i])->buffer->dtype; };
      int64_t role = 0;
      if (c->op == "tl.coop_mma") {
        DataType ab = As<BufferLoadNode>(c->args[1])->buffer->dtype,
                 ct = As<BufferLoadNode>(c->args[0])->buffer->dtype;
        note(0, 2, ab, ct);
        note(1, 0, ab, ct);
      } else if (c->op == "tl.coop_load" && AsConstInt(c->args[3], &role) && role == 0) {
        note(0, 0, mem_t(0), DataType());
      }
    });
    // destinations met only in loads and stores take their types from there
    PostOrderVisitStmt(s, [&](const Stmt& x) {
      auto* ev = x->kind == StmtKind::kEvaluate ? As<EvaluateNode>(x) : nullptr;
      auto* c = ev ? As<CallNode>(ev->value) : nullptr;
      if (!c || (c->op != "tl.coop_load" && c->op != "tl.coop_store")) return;
      auto* l = As<BufferLoadNode>(c->args[c->op == "tl.coop_load" ? 0 : 1]);
      TL_ICHECK(l && coops_.count(l->buffer.get()), "a cooperative tensor no tl.coop_mma names");
    });
  }
  // `T[e]` -> `T[e / per]`.
  std::string CoopRef(const Expr& e) {
    auto* l = As<BufferLoadNode>(e);
    TL_ICHECK(l && coops_.count(l->buffer.get()) && l->indices.size() == 1, "a cooperative tensor operand");
    const int64_t per = coops_.at(l->buffer.get()).per();
    int64_t i = 0;
    std::string idx = AsConstInt(l->indices[0], &i) ? std::to_string(i / per)
                                                    : "(" + E(l->indices[0]) + ") / " + std::to_string(per);
    return Name(l->buffer.get(), l->buffer->name) + "[" + idx + "]";
  }
  // The tensor view of a threadgroup operand: role 0 (left) m x k, 1 (right) k x n, 2 (destination) m x n,
  // stored transposed where the descriptor says so.
  std::string CoopView(const Expr& mem, const Expr& stride, int role, const Coop& k) {
    int64_t cols = 0, rows = 0;
    if (role == 0) {
      cols = k.ta ? k.m : k.k;
      rows = k.ta ? k.k : k.m;
    } else if (role == 1) {
      cols = k.tb ? k.k : k.n;
      rows = k.tb ? k.n : k.k;
    } else {
      cols = k.n;
      rows = k.m;
    }
    auto* l = As<BufferLoadNode>(mem);
    if (!l || l->buffer->scope != Scope::kShared)
      Unsupported("Metal 4 cooperative tensors move through threadgroup memory here");
    return "tl::tg_view(" + Addr(mem) + ", " + std::to_string(cols) + ", " + std::to_string(rows) + ", " +
           E(stride) + ")";
  }
  std::string CoopCall(const CallNode* c) {
    const std::string& op = c->op;
    if (op == "tl.coop_mma") {
      const Coop& k = coops_.at(As<BufferLoadNode>(c->args[0])->buffer.get());
      return "tl::mm_op<" + k.Desc() + ">().run(" + CoopRef(c->args[1]) + ", " +
             CoopView(c->args[2], c->args[3], 1, k) + ", " + CoopRef(c->args[0]) + ")";
    }
    const bool load = op == "tl.coop_load";
    const Expr& t = c->args[load ? 0 : 1];
    const Coop& k = coops_.at(As<BufferLoadNode>(t)->buffer.get());
    return CoopRef(t) + (load ? ".load(" : ".store(") +
           CoopView(c->args[load ? 1 : 0], c->args[2], int(k.role), k) + ")";
  }

  // ---- calls ---------------------------------------------------------------------------------
  void Helper(const std::string& name, const std::string& code) { helpers_.emplace(name, code); }

  std::string AtomicAdd(const CallNode* c) {
    auto* d = As<BufferLoadNode>(c->args[0]);
    if (!d || (d->buffer->scope != Scope::kGlobal && d->buffer->scope != Scope::kShared))
      Unsupported("T.atomic_add on Metal needs a global or shared destination");
    DataType t = d->buffer->dtype;
    std::string at = t == DataType::Int(32)     ? "atomic_int"
                     : t == DataType::UInt(32)  ? "atomic_uint"
                     : t == DataType::Float(32) ? "atomic_float"
                                                : "";
    if (at.empty()) Unsupported("T.atomic_add on Metal supports int32, uint32 and float32; got " + t.str());
    std::string v = E(c->args[1]);
    if (c->args[1]->dtype != t) v = "static_cast<" + CType(t) + ">(" + v + ")";
    return "atomic_fetch_add_explicit((" + std::string(Space(d->buffer)) + " " + at + "*)" +
           Addr(c->args[0]) + ", " + v + ", memory_order_relaxed)";
  }

  // T.atomic_max / T.atomic_min: int32 and uint32 by atomic_fetch_max/min_explicit; float32 by a
  // compare-and-swap loop on atomic_uint (Metal has no float max), where v replaces the element only if
  // it compares greater (less): a NaN never replaces a value, as on every target.
  std::string AtomicExtreme(const CallNode* c, bool max) {
    auto* d = As<BufferLoadNode>(c->args[0]);
    const char* what = max ? "T.atomic_max" : "T.atomic_min";
    if (!d || (d->buffer->scope != Scope::kGlobal && d->buffer->scope != Scope::kShared))
      Unsupported(std::string(what) + " on Metal needs a global or shared destination");
    DataType t = d->buffer->dtype;
    std::string v = E(c->args[1]);
    if (c->args[1]->dtype != t) v = "static_cast<" + CType(t) + ">(" + v + ")";
    std::string sp = Space(d->buffer);
    if (t == DataType::Int(32) || t == DataType::UInt(32))
      return std::string("atomic_fetch_") + (max ? "max" : "min") + "_explicit((" + sp + " " +
             (t == DataType::Int(32) ? "atomic_int" : "atomic_uint") + "*)" + Addr(c->args[0]) + ", " + v +
             ", memory_order_relaxed)";
    if (t != DataType::Float(32))
      Unsupported(std::string(what) + " on Metal supports int32, uint32 and float32; got " + t.str());
    std::string n =
        std::string("tl_atomic_") + (max ? "max" : "min") + "_f32_" + (sp == "device" ? "g" : "l");
    Helper(
        n,
        "inline void " + n + "(" + sp + " float* p, float v) {\n  " + sp + " atomic_uint* q = (" + sp +
            " atomic_uint*)p;\n  uint old = atomic_load_explicit(q, memory_order_relaxed);\n" +
            "  while (v " + (max ? ">" : "<") + " as_type<float>(old)) {\n" +
            "    if (atomic_compare_exchange_weak_explicit(q, &old, as_type<uint>(v), memory_order_relaxed, "
            "memory_order_relaxed))\n      return;\n  }\n}\n");
    return n + "(" + Addr(c->args[0]) + ", " + v + ")";
  }

  // T.atomic_load / T.atomic_store (relaxed, 32-bit: the lowering refuses the rest): the element as an
  // atomic_uint / atomic_int, a float through its bits.
  std::string AtomicLoadStore(const CallNode* c) {
    auto* d = As<BufferLoadNode>(c->args[0]);
    const bool load = c->op == "tl.atomic_load";
    const std::string what = load ? "T.atomic_load" : "T.atomic_store";
    if (!d || (d->buffer->scope != Scope::kGlobal && d->buffer->scope != Scope::kShared))
      Unsupported(what + " on Metal needs a global or shared element");
    DataType t = d->buffer->dtype;
    if (t.bits() != 32) Unsupported(what + " on Metal takes 32-bit elements; got " + t.str());
    const bool sgn = t == DataType::Int(32);
    const std::string at = sgn ? "atomic_int" : "atomic_uint", bits = sgn ? "int" : "uint";
    const std::string p = "(" + std::string(Space(d->buffer)) + " " + at + "*)" + Addr(c->args[0]);
    if (load) {
      std::string v = "atomic_load_explicit(" + p + ", memory_order_relaxed)";
      return t.is_float() ? "as_type<float>(" + v + ")" : v;
    }
    std::string v = E(c->args[1]);
    if (c->args[1]->dtype != t) v = "static_cast<" + CType(t) + ">(" + v + ")";
    if (t.is_float()) v = "as_type<uint>(" + v + ")";
    return "atomic_store_explicit(" + p + ", " + v + ", memory_order_relaxed)";
  }

  std::string CallE(const CallNode* c) override {
    const std::string& op = c->op;
    if (op == "tl.atomic_max" || op == "tl.atomic_min") return AtomicExtreme(c, op == "tl.atomic_max");
    auto arg = [&](size_t i) { return E(c->args[i]); };
    if (op == "tl.thread_idx") return "((int)tl_thread_id.x)";
    if (op == "tl.syncthreads")
      return "threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device)";
    if (op == "tl.bitwise_xor") return "(" + arg(0) + " ^ " + arg(1) + ")";
    if (op == "popcount" || op == "clz")  // the builtins count in the operand type's own width
      return "((" + CType(c->dtype) + ")" + op + "((" + CType(c->args[0]->dtype) + ")(" + arg(0) + ")))";
    if (op == "tl.reinterpret")  // MSL's bit cast; the operand first converted to its own dtype
      return "as_type<" + CType(c->dtype) + ">((" + CType(c->args[0]->dtype) + ")(" + arg(0) + "))";
    if (op == "tl.shfl_xor") return "simd_shuffle_xor(" + arg(0) + ", (ushort)(" + arg(1) + "))";
    if (op == "tl.atomic_load" || op == "tl.atomic_store") return AtomicLoadStore(c);
    if (op == "tl.shfl_sync") {  // (mask, value, lane, width, 32): lane of the group of `width` lanes
      if (!IsConstInt(c->args[0], 0xFFFFFFFFll))
        throw UserError(ErrorKind::kUnsupported,
                        "T.tvm_warp_shuffle with a lane mask other than 0xFFFFFFFF: Metal shuffles over the "
                        "whole simdgroup");
      const std::string w = arg(3);
      return "simd_shuffle(" + arg(1) + ", (ushort)((((uint)tl_thread_id.x) & 31u & ~(" + w + " - 1)) | ((" +
             arg(2) + ") & (" + w + " - 1))))";
    }
    if (op == "tl.any_sync" || op == "tl.all_sync") {  // (mask, predicate, 32): over the simdgroup
      if (!IsConstInt(c->args[0], 0xFFFFFFFFll))
        throw UserError(ErrorKind::kUnsupported,
                        "T." + op.substr(3) +
                            " with a lane mask other than 0xFFFFFFFF: Metal votes over the whole "
                            "simdgroup (simd_any / simd_all)");
      return std::string("(int)") + (op == "tl.any_sync" ? "simd_any(" : "simd_all(") + arg(1) + ")";
    }
    if (op == "tl.atomic_add" || op == "atomic_add") return AtomicAdd(c);
    if (op == "tl.simdgroup_load" || op == "tl.simdgroup_store") {
      bool load = op == "tl.simdgroup_load";
      int64_t tr = 0;
      AsConstInt(c->args[3], &tr);
      return std::string(load ? "simdgroup_load(" : "simdgroup_store(") + Matrix(c->args[load ? 0 : 1]) +
             ", " + Addr(c->args[load ? 1 : 0]) + ", " + arg(2) + ", ulong2(0, 0), " +
             (tr ? "true" : "false") + ")";
    }
    if (op == "tl.coop_load" || op == "tl.coop_store" || op == "tl.coop_mma") return CoopCall(c);
    if (op == "tl.simdgroup_mma")
      return "simdgroup_multiply_accumulate(" + Matrix(c->args[0]) + ", " + Matrix(c->args[1]) + ", " +
             Matrix(c->args[2]) + ", " + Matrix(c->args[3]) + ")";
    if (op == "min_value" || op == "max_value") {
      DataType t = c->dtype;
      bool lo = op == "min_value";
      if (t == DataType::Float(32)) return lo ? "(-MAXFLOAT)" : "MAXFLOAT";
      if (t == DataType::Float(16)) return lo ? "(-MAXHALF)" : "MAXHALF";
      if (t == DataType::BFloat16()) return lo ? "bfloat(-3.38953139e38f)" : "bfloat(3.38953139e38f)";
      if (t.is_bool()) return lo ? "false" : "true";
      if (t.is_integer()) {
        std::string T = CType(t);
        if (t.is_uint()) return lo ? T + "(0)" : T + "(~" + T + "(0))";
        int b = t.bits();
        uint64_t mx = (uint64_t{1} << (b - 1)) - 1;
        return lo ? "(" + T + "(-" + std::to_string(mx) + (b == 64 ? "LL" : "") + ") - " + T + "(1))"
                  : T + "(" + std::to_string(mx) + (b == 64 ? "LL" : "") + ")";
      }
      Unsupported("T." + op + " of " + t.str() + " on Metal");
    }
    if (op == "address_of") return Addr(c->args[0]);
    if (op == "print")
      Unsupported(
          "T.print is not supported by the Metal backend (MSL has no printf); use "
          "execution_backend=\"emulator\", which prints");
    if (op == "device_assert")
      Unsupported(
          "T.device_assert is not supported by the Metal backend (MSL has no trap); use "
          "execution_backend=\"emulator\", which checks assertions");
    bool fl = !c->args.empty() && c->args[0]->dtype.is_float();
    static const std::set<std::string> same{"exp", "exp2", "log",   "log2", "log10", "sqrt", "rsqrt", "tanh",
                                            "sin", "cos",  "floor", "ceil", "trunc", "pow",  "fma"};
    if (same.count(op)) return "metal::" + op + "(" + Args(c) + ")";
    if (op == "round")
      return "metal::rint(" + arg(0) + ")";  // half to even, like NumPy and the other backends
    if (op == "abs")
      return fl ? "metal::fabs(" + arg(0) + ")"
                : "static_cast<" + CType(c->dtype) + ">(metal::abs(" + arg(0) + "))";
    if (op == "sigmoid") return "(1.0f / (1.0f + metal::exp(-(float)(" + arg(0) + "))))";
    if (op == "erf") {
      // MSL has no erf: Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
      Helper(
          "erf_",
          "inline float erf_(float x) {\n"
          "  float s = metal::sign(x), a = metal::fabs(x), t = 1.0f / (1.0f + 0.3275911f * a);\n"
          "  float p = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t +\n"
          "             0.254829592f) * t;\n"
          "  return s * (1.0f - p * metal::exp(-a * a));\n"
          "}\n");
      return "tl::erf_((float)(" + arg(0) + "))";
    }
    Unsupported("the Metal backend has no lowering for '" + op + "' yet");
  }

  std::string E(const Expr& e) override {
    if (e->kind == ExprKind::kCast) {
      auto* c = static_cast<const CastNode*>(e.get());
      DataType to = c->dtype, from = c->value->dtype;
      std::string x = E(c->value);
      if (to == from) return x;
      if (to.is_bool()) return "((" + x + ") != 0)";
      if (to.is_integer() && from.is_float()) {
        // Truncates toward zero and saturates; NaN gives 0 (docs/semantics.md).
        std::string T = CType(to), n = "sat_" + T;
        Helper(n, "inline " + T + " " + n + "(float x) {\n  if (x != x) return " + T +
                      "(0);\n  if (x <= float(" + CallE(MinMax("min_value", to)) + ")) return " +
                      CallE(MinMax("min_value", to)) + ";\n  if (x >= float(" +
                      CallE(MinMax("max_value", to)) + ")) return " + CallE(MinMax("max_value", to)) +
                      ";\n  return " + T + "(x);\n}\n");
        return "tl::" + n + "((float)(" + x + "))";
      }
      return "static_cast<" + CType(to) + ">(" + x + ")";
    }
    return CodegenC::E(e);
  }
  const CallNode* MinMax(const char* op, DataType t) {
    keep_.push_back(Call(t, op, {}));
    return static_cast<const CallNode*>(keep_.back().get());
  }

  void Stmt_(const Stmt& s, int ind) override {
    auto* ev = s && s->kind == StmtKind::kEvaluate ? As<EvaluateNode>(s) : nullptr;
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    if (c && c->op == "tl.vector_store") {  // (dst, lane values...): element by element
      auto* d = As<BufferLoadNode>(c->args[0]);
      TL_ICHECK(d, "tl.vector_store needs a memory destination");
      Line(ind, "{");
      Line(ind + 1, std::string(Space(d->buffer)) + " " + CType(d->buffer->dtype) +
                        "* tl_p = " + Addr(c->args[0]) + ";");
      for (size_t i = 1; i < c->args.size(); ++i) {
        std::string v = E(c->args[i]);
        if (c->args[i]->dtype != d->buffer->dtype)
          v = "static_cast<" + CType(d->buffer->dtype) + ">(" + v + ")";
        Line(ind + 1, "tl_p[" + std::to_string(i - 1) + "] = " + v + ";");
      }
      Line(ind, "}");
      return;
    }
    if (c && c->op == "tl.vector_load") {  // (dst registers, src, lanes, valid): element by element or zeros
      int64_t V = 0;
      AsConstInt(c->args[2], &V);
      auto* d = As<BufferLoadNode>(c->args[0]);
      auto* g = As<BufferLoadNode>(c->args[1]);
      TL_ICHECK(d && g, "tl.vector_load needs memory operands");
      std::string DT = CType(d->buffer->dtype);
      Line(ind, "{");
      Line(ind + 1, std::string(Space(d->buffer)) + " " + DT + "* tl_d = " + Addr(c->args[0]) + ";");
      Line(ind + 1, std::string(Space(g->buffer)) + " " + CType(g->buffer->dtype) +
                        "* tl_s = " + Addr(c->args[1]) + ";");
      Line(ind + 1, "const bool tl_ok = " + E(c->args[3]) + ";");
      for (int64_t j = 0; j < V; ++j)
        Line(ind + 1, "tl_d[" + std::to_string(j) + "] = tl_ok ? static_cast<" + DT + ">(tl_s[" +
                          std::to_string(j) + "]) : " + DT + "(0);");
      Line(ind, "}");
      return;
    }
    CodegenC::Stmt_(s, ind);
  }

  void Kernel(const KernelNode* n, int ind) override {
    static const char* dims[] = {"x", "y", "z"};
    for (size_t i = 0; i < n->block_vars.size(); ++i)
      Line(ind, "const " + CType(n->block_vars[i]->dtype) + " " + Name(n->block_vars[i].get()) + " = (" +
                    CType(n->block_vars[i]->dtype) + ")tl_group_id." + dims[i] + ";");
    for (auto& b : n->alloc_buffers) {
      int64_t count = 1;
      AsConstInt(b->shape[0], &count);
      if (b->scope == Scope::kShared && !b->data) {
        continue;  // declared at the kernel's top (Run)
      } else if (b->scope == Scope::kShared) {
        Line(ind, "threadgroup " + CType(b->dtype) + "* " + Name(b.get(), b->name) + " = (threadgroup " +
                      CType(b->dtype) + "*)(" + Name(b->data.get(), b->data->name) + " + " +
                      std::to_string(b->byte_offset) + ");");
      } else if (coops_.count(b.get())) {
        const Coop& c = coops_.at(b.get());
        TL_ICHECK(c.c.bits() > 0, "cooperative tensor '" + b->name + "' is in no tl.coop_mma");
        const std::string make = "tl::coop<" + c.Desc() + ", " + CType(c.ab) + ", " + CType(c.c) +
                                 ">::" + (c.role == 0 ? "left()" : "dest()");
        std::string init;
        for (int64_t i = 0; i < count / c.per(); ++i) init += (i ? ", " : "") + make;
        Line(ind, "decltype(" + make + ") " + Name(b.get(), b->name) + "[" + std::to_string(count / c.per()) +
                      "] = {" + init + "};");
      } else if (matrices_.count(b.get())) {
        Line(ind,
             MatrixType(b->dtype) + " " + Name(b.get(), b->name) + "[" + std::to_string(count / 2) + "];");
      } else {
        Line(ind, CType(b->dtype) + " " + Name(b.get(), b->name) + "[" + std::to_string(count) + "];");
      }
    }
    for (auto& kv : n->var_inits)
      Line(ind, Name(kv.first.get(), kv.first->name) + "[0] = " + E(kv.second) + ";");
    Stmt_(n->body, ind);
  }

  PrimFunc f_;
  std::set<const BufferNode*> matrices_;
  std::map<const BufferNode*, Coop> coops_;
  std::map<std::string, std::string> helpers_;  // by name: each emitted once, in name order
  std::vector<Expr> keep_;
  bool bfloat_ = false;
};

}  // namespace

std::string CodegenMetal(const PrimFunc& f) { return CodegenMetalImpl(f).Run(); }

}  // namespace tl
