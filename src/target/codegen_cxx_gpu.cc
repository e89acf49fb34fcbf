// See codegen_cxx_gpu.h.
#include "target/codegen_cxx_gpu.h"

#include <algorithm>
#include <set>

#include "ir/functor.h"
#include "ir/params.h"
#include "target/cuda/codegen_cuda.h"

namespace tl {

std::string CodegenCxxGpu::CType(DataType t) {
  switch (t.code()) {
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kInt: return t.bits() <= 8 ? "int8_t" : "int" + std::to_string(t.bits()) + "_t";
    case DataType::Code::kUInt: return t.bits() <= 8 ? "uint8_t" : "uint" + std::to_string(t.bits()) + "_t";
    case DataType::Code::kFloat:
      if (t.bits() == 16) return "tl::half_t";
      return t.bits() == 32 ? "float" : "double";
    case DataType::Code::kBFloat: return "tl::bfloat16_t";
    case DataType::Code::kFloat8E4M3:
    case DataType::Code::kFloat8E5M2:
      // OCP fp8 (include/tl_device/cuda/common.h); HIP's gfx940 fp8 is the FNUZ variant, a different format.
      if (backend_ != "CUDA") break;
      return t.code() == DataType::Code::kFloat8E4M3 ? "tl::float8_e4m3_t" : "tl::float8_e5m2_t";
    case DataType::Code::kFloat6E2M3:
      if (backend_ != "CUDA") break;
      return "tl::float6_e2m3_t";
    case DataType::Code::kFloat6E3M2:
      if (backend_ != "CUDA") break;
      return "tl::float6_e3m2_t";
    case DataType::Code::kFloat4E2M1:
      if (backend_ != "CUDA") break;
      return "tl::float4_e2m1_t";
    case DataType::Code::kFloat8E8M0:
      if (backend_ != "CUDA") break;
      return "tl::float8_e8m0_t";
    case DataType::Code::kHandle: return "void*";
    case DataType::Code::kVoid: return "void";
    default: break;
  }
  throw UserError(ErrorKind::kUnsupported,
                  "the " + backend_ + " backend does not support the dtype " + t.str() + " yet", cur_span_);
}

std::string CodegenCxxGpu::Emit(const std::string& banner, const std::vector<std::string>& includes) {
  os_ << "// " << banner << "\n";
  for (auto& h : includes) os_ << "#include \"" << h << "\"\n";
  os_ << "\n";
  // T.import_source: the user's CUDA C++, once each, before the kernel (the lowering refused it elsewhere)
  std::vector<std::string> sources;
  PostOrderVisitStmt(f_->body, [&](const Stmt& s) {
    auto* a = As<AttrStmtNode>(s);
    auto* v = a && a->key == "tl.import_source" ? As<StringImmNode>(a->value) : nullptr;
    if (v && std::find(sources.begin(), sources.end(), v->value) == sources.end())
      sources.push_back(v->value);
  });
  for (auto& src : sources)
    os_ << "// T.import_source\n" << src << (src.empty() || src.back() == '\n' ? "" : "\n") << "\n";
  int64_t threads = 0;
  if (const KernelNode* k = FindKernel(f_->body)) AsConstInt(k->threads[0], &threads);
  std::string params;
  for (auto& p : f_->params) {
    if (!params.empty()) params += ", ";
    cur_span_ = p.buffer && p.buffer->span.defined() ? p.buffer->span : f_->span;
    if (p.buffer)
      params += CType(p.buffer->dtype) + "* __restrict__ " + Name(p.buffer.get(), p.buffer->name);
    else
      params += CType(p.var->dtype) + " " + Name(p.var.get());
  }
  for (auto& v : SymbolicVars(f_))
    params += (params.empty() ? "" : ", ") + CType(v->dtype) + " " + Name(v.get());
  params += ExtraParams();
  // setmaxnreg moves registers between warp groups of a block whose register count ptxas must know at
  // entry: with one block per SM (minBlocksPerMultiprocessor 1, CUTLASS's choice too) it is the register
  // file over the block's threads; without it ptxas ignores every setmaxnreg ("(C7508) 'setmaxnreg'
  // ignored; unable to determine register count at entry").
  bool max_nreg = false;
  PostOrderVisitStmt(f_->body, [&](const Stmt& x) {
    auto* ev = As<EvaluateNode>(x);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    max_nreg = max_nreg || (c && c->op == "tl.set_max_nreg");
  });
  os_ << "extern \"C\" __global__ void __launch_bounds__(" << threads << (max_nreg ? ", 1" : "") << ") "
      << KernelAttributes() << CudaKernelName(f_) << "(" << params << ") {\n";
  Stmt_(f_->body, 1);
  os_ << "}\n";
  return os_.str();
}

void CodegenCxxGpu::ForPragma(const ForNode* n, int ind) {
  if (n->for_kind == ForKind::kUnrolled || n->for_kind == ForKind::kVectorized) Line(ind, UnrollPragma(n));
  if (std::string p = PartialUnrollPragma(n); !p.empty()) Line(ind, p);
}

std::string CodegenCxxGpu::CommonCallE(const CallNode* c) {
  const std::string& op = c->op;
  auto arg = [&](size_t i) { return E(c->args[i]); };
  if (op == "tl.bitwise_xor") return "(" + arg(0) + " ^ " + arg(1) + ")";
  if (op == "tl.vector_store") {  // (dst, lane values...): one 4/8/16-byte store (docs/thread_ir.md)
    int bytes = c->args[0]->dtype.bytes() * static_cast<int>(c->args.size() - 1);
    std::string a = Addr(c->args[0]);
    for (size_t i = 1; i < c->args.size(); ++i) a += ", " + arg(i);
    // a shared destination: vector_store_shared (CUDA: st.shared; vector_store's st.global with the generic
    // address of shared memory is not a shared store)
    auto* dl = As<BufferLoadNode>(c->args[0]);
    const bool shared = dl && dl->buffer->scope == Scope::kShared;
    return std::string(shared ? "tl::vector_store_shared<" : "tl::vector_store<") + std::to_string(bytes) +
           ">(" + a + ")";
  }
  if (op == "tl.vector_load") {  // (dst registers, src, lanes, valid): one 4/8/16-byte load or zeros
    int64_t lanes = 0;
    AsConstInt(c->args[2], &lanes);
    int bytes = c->args[1]->dtype.bytes() * static_cast<int>(lanes);
    return "tl::vector_load<" + std::to_string(bytes) + ">(" + Addr(c->args[0]) + ", " + Addr(c->args[1]) +
           ", " + arg(3) + ")";
  }
  if (op == "tl.shfl_xor") return "tl::shfl_xor(" + arg(0) + ", " + arg(1) + ")";
  if (op == "tl.memory_fence") return "tl::memory_fence<" + arg(0) + ">()";  // (C++ memory order)
  if (op == "tl.atomic_load")  // (element, C++ memory order)
    return "tl::atomic_load<" + arg(1) + ">(" + Addr(c->args[0]) + ")";
  if (op == "tl.atomic_store") {  // (element, value, C++ memory order)
    std::string v = arg(1);
    if (c->args[1]->dtype != c->args[0]->dtype)
      v = "static_cast<" + CType(c->args[0]->dtype) + ">(" + v + ")";
    return "tl::atomic_store<" + arg(2) + ">(" + Addr(c->args[0]) + ", " + v + ")";
  }
  if (op == "tl.call_extern") {  // (name, args...): a function of T.import_source'd code
    std::string a;
    for (size_t i = 1; i < c->args.size(); ++i) a += (i > 1 ? ", " : "") + arg(i);
    return As<StringImmNode>(c->args[0])->value + "(" + a + ")";
  }
  if (op == "tl.shfl_sync")  // (mask, value, lane, width, wave)
    return "tl::shfl_sync(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ", " + arg(3) + ")";
  if (op == "tl.any_sync" || op == "tl.all_sync")  // (mask, predicate, width): the device header's vote
    return "tl::" + op.substr(3) + "(" + arg(0) + ", " + arg(1) + ")";
  if (op == "tl.atomic_add" || op == "tl.atomic_max" || op == "tl.atomic_min" || op == "tl.atomic_fetch_add")
    return "tl::" + op.substr(3) + "(" + Addr(c->args[0]) + ", " + arg(1) + ")";
  if (op == "tl.atomic_add_vec") {  // (&first element, V float32 values): red.global.add.v2 / .v4.f32
    std::string s = "tl::atomic_add_v" + std::to_string(c->args.size() - 1) + "(" + Addr(c->args[0]);
    for (size_t i = 1; i < c->args.size(); ++i) s += ", " + arg(i);
    return s + ")";
  }
  if (op == "min_value" || op == "max_value")
    return std::string("tl::") + (op == "min_value" ? "lowest" : "highest") + "<" + CType(c->dtype) + ">()";
  static const std::set<std::string> header{
      "exp",     "exp2", "log", "log2",  "log10",         "sqrt",       "rsqrt",         "abs",
      "tanh",    "sin",  "cos", "floor", "ceil",          "round",      "trunc",         "erf",
      "sigmoid", "pow",  "fma", "print", "device_assert", "address_of", "tl.reinterpret"};
  if (!header.count(op))
    throw UserError(ErrorKind::kUnsupported,
                    "the " + backend_ + " backend has no lowering for '" + op + "' yet");
  return CodegenC::CallE(c);
}

void CodegenCxxGpu::Kernel(const KernelNode* n, int ind) {
  static const char* dims[] = {"x", "y", "z"};
  for (size_t i = 0; i < n->block_vars.size(); ++i)
    Line(ind, "const " + CType(n->block_vars[i]->dtype) + " " + Name(n->block_vars[i].get()) + " = (" +
                  CType(n->block_vars[i]->dtype) + ")" + BlockIndex(dims[i]) + ";");
  for (auto& b : n->alloc_buffers) {
    int64_t count = 1;
    AsConstInt(b->shape[0], &count);
    if (b->scope == Scope::kShared && !b->data) {
      TL_ICHECK(b->dtype == DataType::UInt(8),
                "shared buffer '" + b->name + "' was not placed by PlanSharedMemory");
      SharedBytes(b, count, ind);
    } else if (b->scope == Scope::kShared) {
      Line(ind, CType(b->dtype) + "* __restrict__ " + Name(b.get(), b->name) + " = reinterpret_cast<" +
                    CType(b->dtype) + "*>(" + Name(b->data.get(), b->data->name) + " + " +
                    std::to_string(b->byte_offset) + ");");
    } else {
      Line(ind, LocalAlign() + " " + CType(b->dtype) + " " + Name(b.get(), b->name) + "[" +
                    std::to_string(count) + "];");
    }
  }
  for (auto& kv : n->var_inits)
    Line(ind, Name(kv.first.get(), kv.first->name) + "[0] = " + E(kv.second) + ";");
  Stmt_(n->body, ind);
}

}  // namespace tl
