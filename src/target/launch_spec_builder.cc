// MakeLaunchSpec and CompileIntProgram; see launch_spec_builder.h.
#include "target/launch_spec_builder.h"
#include "transform/resolve_buffer_views.h"

#include <algorithm>

#include <set>

#include "ir/functor.h"
#include "ir/printer.h"
#include "runtime/module.h"
#include "ir/params.h"
#include "target/cuda/tensor_maps.h"

namespace tl {
namespace {

bool Emit(const Expr& e, const std::vector<Var>& syms, std::vector<IntProgram::Instr>* code) {
  using P = IntProgram;
  switch (e->kind) {
    case ExprKind::kIntImm:
      code->push_back({P::kConst, static_cast<const IntImmNode*>(e.get())->value});
      return true;
    case ExprKind::kVar: {
      auto it = std::find_if(syms.begin(), syms.end(), [&](const Var& v) { return v.get() == e.get(); });
      if (it == syms.end()) return false;
      code->push_back({P::kSym, static_cast<int64_t>(it - syms.begin())});
      return true;
    }
    case ExprKind::kCast: {
      auto* c = static_cast<const CastNode*>(e.get());
      return (c->dtype.is_int() || c->dtype.is_uint() || c->dtype.is_bool()) && Emit(c->value, syms, code);
    }
    case ExprKind::kNot:
      if (!Emit(static_cast<const NotNode*>(e.get())->a, syms, code)) return false;
      code->push_back({P::kNot, 0});
      return true;
    case ExprKind::kSelect: {
      auto* s = static_cast<const SelectNode*>(e.get());
      if (!Emit(s->cond, syms, code) || !Emit(s->true_value, syms, code) || !Emit(s->false_value, syms, code))
        return false;
      code->push_back({P::kSelect, 0});
      return true;
    }
    case ExprKind::kCall: {
      auto* c = static_cast<const CallNode*>(e.get());
      if (c->op != "tl.bitwise_xor" || c->args.size() != 2) return false;
      if (!Emit(c->args[0], syms, code) || !Emit(c->args[1], syms, code)) return false;
      code->push_back({P::kXor, 0});
      return true;
    }
    case ExprKind::kBinary: {
      auto* b = static_cast<const BinaryNode*>(e.get());
      if (!Emit(b->a, syms, code) || !Emit(b->b, syms, code)) return false;
      static const std::pair<BinaryOp, P::Op> ops[] = {{BinaryOp::kAdd, P::kAdd},
                                                       {BinaryOp::kSub, P::kSub},
                                                       {BinaryOp::kMul, P::kMul},
                                                       {BinaryOp::kDiv, P::kDiv},
                                                       {BinaryOp::kMod, P::kMod},
                                                       {BinaryOp::kFloorDiv, P::kFloorDiv},
                                                       {BinaryOp::kFloorMod, P::kFloorMod},
                                                       {BinaryOp::kMin, P::kMin},
                                                       {BinaryOp::kMax, P::kMax},
                                                       {BinaryOp::kEQ, P::kEQ},
                                                       {BinaryOp::kNE, P::kNE},
                                                       {BinaryOp::kLT, P::kLT},
                                                       {BinaryOp::kLE, P::kLE},
                                                       {BinaryOp::kGT, P::kGT},
                                                       {BinaryOp::kGE, P::kGE},
                                                       {BinaryOp::kAnd, P::kAnd},
                                                       {BinaryOp::kOr, P::kOr}};
      for (auto& [from, to] : ops)
        if (from == b->op) {
          code->push_back({to, 0});
          return true;
        }
      return false;
    }
    default: return false;
  }
}

}  // namespace

std::vector<bool> WrittenParams(const PrimFunc& f) {
  class Writes : public IRVisitor {
   public:
    std::set<const BufferNode*> written;

   protected:
    void VisitStore(const StoreNode* n) override {
      written.insert(StorageOwner(n->buffer));
      IRVisitor::VisitStore(n);
    }
    void VisitCall(const CallNode* c) override {  // T.atomic_store writes its element
      if (c->op == "tl.atomic_store" && !c->args.empty()) {
        auto* a = As<CallNode>(c->args[0]);
        auto* l = a && a->op == "address_of" ? As<BufferLoadNode>(a->args[0]) : As<BufferLoadNode>(c->args[0]);
        if (l) written.insert(StorageOwner(l->buffer));
      }
      IRVisitor::VisitCall(c);
    }
    void VisitTileOp(const StmtNode* s) override {
      if (auto* op = As<TileOpNode>(s))
        for (auto& [r, access] : op->Regions())
          if (access != Access::kRead) written.insert(StorageOwner(r->buffer));
      IRVisitor::VisitTileOp(s);
    }
  } w;
  w.VisitStmt(f->body);
  std::vector<bool> out;
  for (auto& p : f->params) out.push_back(p.buffer && w.written.count(p.buffer.get()));
  return out;
}

IntProgram CompileIntProgram(const Expr& e, const std::vector<Var>& syms) {
  IntProgram p;
  p.text = PrintExpr(e);
  p.computable = Emit(e, syms, &p.code);
  if (!p.computable) p.code.clear();
  return p;
}

LaunchSpec MakeLaunchSpec(const PrimFunc& f, const PrimFunc& lowered, const std::string& entry,
                          int64_t threads, int64_t dynamic_smem) {
  LaunchSpec s;
  s.func_name = f->name;
  s.entry = entry;
  std::vector<Var> syms = SymbolicVars(f);
  for (auto& v : syms) s.syms.push_back({v->name, v->dtype});
  std::vector<bool> written = WrittenParams(f);
  for (size_t i = 0; i < f->params.size(); ++i) {
    const Param& p = f->params[i];
    ParamSpec ps;
    ps.is_tensor = static_cast<bool>(p.buffer);
    ps.name = p.buffer ? p.buffer->name : p.var->name;
    ps.dtype = p.buffer ? p.buffer->dtype : p.var->dtype;
    if (p.buffer)
      for (auto& d : p.buffer->shape) ps.shape.push_back(CompileIntProgram(d, syms));
    ps.written = written[i];
    // A scalar named in a T.make_tensor shape must equal the size its tensor binds.
    auto sizes = f->attrs.find("tl.tensor_size_params");
    if (!p.buffer && sizes != f->attrs.end() &&
        ("," + sizes->second + ",").find("," + p.var->name + ",") != std::string::npos)
      for (size_t k = 0; k < syms.size(); ++k)
        if (syms[k]->name == p.var->name) ps.size_of_sym = static_cast<int>(k);
    s.params.push_back(std::move(ps));
  }
  if (lowered) {
    if (const KernelNode* k = FindKernel(lowered->body)) {
      // grid extents may read integer scalar parameters too: their values follow the symbols'
      // (LaunchSpec::grid)
      std::vector<Var> with_scalars = syms;
      for (const Param& p : f->params)
        with_scalars.push_back(p.buffer || !p.var || p.var->dtype.is_float() ? Var() : p.var);
      for (auto& g : k->grid) s.grid.push_back(CompileIntProgram(g, with_scalars));
    }
    s.tensor_maps = CollectTensorMaps(lowered);  // CUDA sm_90+ TMA copies; none elsewhere
    // the tiled shape: the lowered parameter's, which is the program's view of the argument where it made one
    for (TensorMapSpec& m : s.tensor_maps)
      for (const Expr& d : lowered->params[static_cast<size_t>(m.param)].buffer->shape)
        m.shape.push_back(CompileIntProgram(d, syms));
    PostOrderVisitStmt(lowered->body, [&](const Stmt& st) {
      auto* ev = As<EvaluateNode>(st);
      auto* c = ev ? As<CallNode>(ev->value) : nullptr;
      s.cooperative |= c && c->op == "tl.sync_grid";
    });
    s.cluster = ClusterDims(lowered->body);
    if (s.cooperative && s.cluster != std::array<int64_t, 3>{1, 1, 1})
      throw UserError(
          ErrorKind::kUnsupported,
          "kernel '" + s.func_name +
              "' uses T.sync_grid inside T.ClusterKernel: a cooperative launch of clusters is not "
              "supported; synchronise the cluster with T.cluster_sync, or drop the clusters");
  }
  s.threads = threads;
  s.dynamic_smem = dynamic_smem;
  return s;
}

}  // namespace tl
