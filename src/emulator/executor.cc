// The lockstep executor: control flow and expressions. Buffer storage and the memory checks are in
// memory.cc.
#include "emulator/executor.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "ir/functor.h"

namespace tl::emu {
namespace {

bool Truthy(Slot v, DataType t) { return t.is_float() ? v.f != 0 : v.i != 0; }

}  // namespace

void Unsupported(const std::string& what, const Span& span) {
  TL_USER_ERROR(kUnsupported, span, "emulator: ", what);
}

// ------------------------------------------------------------------------------- launch

void Executor::Run(const PrimFunc& f, const std::vector<void*>& args,
                   const std::map<const VarNode*, double>& syms) {
  TL_ICHECK(args.size() == f->params.size(), "emulator: ", args.size(), " arguments for ", f->params.size(),
            " parameters of ", f->name);
  for (const auto& [v, x] : syms) {
    Slot s;
    if (v->dtype.is_float())
      s.f = x;
    else
      s.i = static_cast<int64_t>(x);
    BindUniform(v, s);
  }
  for (const auto& [v, x] : opt_.exact_ints) {
    Slot s;
    s.i = x;
    BindUniform(v, s);
  }
  T_ = 1;
  Stmt body = f->body;
  while (auto* l = As<LetNode>(body)) {  // host-side scalars
    TmpScope ts(this);
    Slot* v = Tmp();
    Eval(l->value, Lanes{0}, v);
    BindUniform(l->var.get(), Convert(v[0], l->value->dtype, l->var->dtype));
    body = l->body;
  }
  auto* k = As<KernelNode>(body);
  if (!k)
    Unsupported("expected a lowered function whose body is one KernelNode (under optional Lets)", f->span);

  for (size_t i = 0; i < f->params.size(); ++i) {
    const Buffer& b = f->params[i].buffer;
    if (!b) continue;
    TL_ICHECK(args[i], "emulator: null pointer for buffer parameter ", b->name);
    auto m = std::make_unique<Mem>();
    m->buf = b.get();
    m->t = b->dtype;
    m->esize = b->dtype.bytes();
    m->n = 1;
    for (const Expr& e : b->shape) {
      m->shape.push_back(HostInt(e));
      m->n *= m->shape.back();
    }
    m->data = static_cast<uint8_t*>(args[i]);
    mems_[b.get()] = std::move(m);
  }

  std::array<int64_t, 3> grid{1, 1, 1};
  TL_ICHECK(!k->grid.empty() && k->grid.size() <= 3 && k->grid.size() == k->block_vars.size(),
            "emulator: malformed kernel grid");
  for (size_t d = 0; d < k->grid.size(); ++d) grid[d] = HostInt(k->grid[d]);
  if (count_blocks_) {  // GridBlocks: the grid's size only
    counted_blocks_ = grid[0] * grid[1] * grid[2];
    counted_grid_ = grid;
    return;
  }
  if (k->threads.size() != 1) Unsupported("the thread-level IR has exactly one thread extent", k->span);
  int64_t threads = HostInt(k->threads[0]);
  TL_ICHECK(threads >= 1 && threads <= 1024, "emulator: ", threads, " threads per block");
  T_ = static_cast<int>(threads);
  warp_specialized_ = false;
  fiber_width_ = 128;
  bool warps_split = false, group_ops = false;
  PostOrderVisitStmt(k->body, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.warp_specialized") warp_specialized_ = true;
    if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.fiber_per_warp") warps_split = true;
    auto* ev = As<EvaluateNode>(x);
    auto* c = ev ? As<CallNode>(ev->value) : nullptr;
    group_ops |= c && c->op.rfind("tl.wgmma", 0) == 0;  // warp-group collectives: a fiber per warp group
  });
  // branches that give single warps their own work (a TMA warp, an MMA warp): a fiber per warp, so that one
  // warp waiting on another's mbarrier arrivals lets it run
  if (warps_split && !group_ops) fiber_width_ = 32;
  tmp_.clear();
  tmp_top_ = 0;

  for (const Buffer& b : k->alloc_buffers) {
    if (b->shape.size() != 1)
      Unsupported("allocated buffer " + b->name + " must be one-dimensional", b->span);
    // bool elements take a byte each (0 or 1), as in a bool tensor and in the generated code; int4 / uint4
    // and float4_e2m1fn / float6_* too (one value per byte, in its low bits: docs/semantics.md)
    const bool nibble = (b->dtype.bits() == 4 && b->dtype.is_integer()) || b->dtype.is_mx_float();
    if (b->dtype.lanes() != 1 || (b->dtype.bits() < 8 && !b->dtype.is_bool() && !nibble))
      Unsupported("buffer dtype " + b->dtype.str(), b->span);
    auto m = std::make_unique<Mem>();
    m->buf = b.get();
    m->t = b->dtype;
    m->esize = b->dtype.bytes();
    m->n = HostInt(b->shape[0]);
    m->shape = {m->n};
    int64_t copies = b->scope == Scope::kShared ? 1 : T_;
    if (b->data) {
      // A view placed by PlanSharedMemory: its elements live in the kernel's shared byte buffer,
      // so buffers the plan overlaps really share storage here, as on the GPU.
      auto base = mems_.find(b->data.get());
      TL_ICHECK(base != mems_.end() && b->scope == Scope::kShared && !b->data->data, "emulator: view '",
                b->name, "' of a buffer that is not an earlier shared allocation");
      Mem& bm = *base->second;
      TL_ICHECK(b->byte_offset >= 0 && b->byte_offset % m->esize == 0 &&
                    b->byte_offset + m->n * m->esize <= bm.n * bm.esize,
                "emulator: view '", b->name, "' at byte ", b->byte_offset, " does not fit its shared buffer");
      m->data = bm.data + b->byte_offset;
    } else {
      m->own.assign(static_cast<size_t>(copies * m->n * m->esize), 0);
      m->data = m->own.data();
    }
    m->written.assign(static_cast<size_t>(copies * m->n), 0);
    if (b->scope == Scope::kShared) m->shadow.assign(static_cast<size_t>(m->n), Shadow());
    mems_[b.get()] = std::move(m);
  }
  async_.assign(T_, AsyncState());

  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x)
        if (only_block_ < 0 || only_block_ == (z * grid[1] + y) * grid[0] + x) RunBlock(k, {x, y, z});
}

void Executor::RunBlock(const KernelNode* k, const std::array<int64_t, 3>& block) {
  block_ = block;
  started_ = true;
  for (size_t d = 0; d < k->block_vars.size(); ++d) {
    Slot s;
    s.i = block[d];
    BindUniform(k->block_vars[d].get(), s);
  }
  for (const Buffer& b : k->alloc_buffers) {
    Mem& m = MemOf(b.get());
    std::fill(m.own.begin(), m.own.end(), 0);
    std::fill(m.written.begin(), m.written.end(), 0);
    std::fill(m.shadow.begin(), m.shadow.end(), Shadow());
  }
  for (auto& a : async_) a = AsyncState();
  HopperBlockStart();
  AscendBlockStart();
  epoch_ = 1;
  stmt_ = k;
  Lanes all(T_);
  std::iota(all.begin(), all.end(), 0);
  for (const auto& [b, init] : k->var_inits) {
    TmpScope ts(this);
    Slot* v = Tmp();
    Eval(init, all, v);
    Mem& m = MemOf(b.get());
    for (int t : all) Write(m, t, 0, Convert(v[t], init->dtype, m.t));
  }
  if (warp_specialized_ && T_ > fiber_width_)
    RunFibers(k->body, all);  // fibers.cc
  else
    Exec(k->body, all);
  HopperBlockEnd();
  Tcgen05BlockEnd();
  AscendBlockEnd();
}

int64_t Executor::HostInt(const Expr& e) {
  TmpScope ts(this);
  Slot* v = Tmp();
  Eval(e, Lanes{0}, v);
  return AsInt(v[0], e->dtype);
}

// ------------------------------------------------------------------------------- statements

void Executor::Exec(const Stmt& s, const Lanes& act) {
  if (!s) return;
  res_->lane_ops += static_cast<int64_t>(act.size());
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& x : As<SeqNode>(s)->seq) Exec(x, act);
      return;
    case StmtKind::kLet: {
      auto* n = As<LetNode>(s);
      stmt_ = n;
      Binding& b = Bind(n->var.get());
      Eval(n->value, act, b.v.data());
      if (n->var->dtype != n->value->dtype)
        for (int t : act) b.v[t] = Convert(b.v[t], n->value->dtype, n->var->dtype);
      Exec(n->body, act);
      return;
    }
    case StmtKind::kFor: ExecFor(As<ForNode>(s), act); return;
    case StmtKind::kIf: {
      auto* n = As<IfNode>(s);
      stmt_ = n;
      Lanes yes, no;
      {
        TmpScope ts(this);
        Slot* c = Tmp();
        Eval(n->cond, act, c);
        for (int t : act) (Truthy(c[t], n->cond->dtype) ? yes : no).push_back(t);
      }
      if (no.empty()) {
        Exec(n->then_case, act);
      } else {
        if (!yes.empty()) Exec(n->then_case, yes);
        if (n->else_case) Exec(n->else_case, no);
      }
      return;
    }
    case StmtKind::kWhile: {  // each thread loops until its condition is false
      auto* n = As<WhileNode>(s);
      constexpr int64_t kMaxIterations = int64_t{1} << 24;
      Lanes cur = act;
      for (int64_t it = 0;; ++it) {
        stmt_ = n;
        Lanes yes;
        {
          TmpScope ts(this);
          Slot* c = Tmp();
          Eval(n->cond, cur, c);
          for (int t : cur)
            if (Truthy(c[t], n->cond->dtype)) yes.push_back(t);
        }
        if (yes.empty()) return;
        if (it == kMaxIterations) {
          Report("hang", yes[0], [&] {
            return "the while loop ran " + std::to_string(kMaxIterations) +
                   " iterations and its condition is still true; stopped here";
          });
          return;
        }
        Exec(n->body, yes);
        cur = std::move(yes);
      }
    }
    case StmtKind::kStore: ExecStore(As<StoreNode>(s), act); return;
    case StmtKind::kEvaluate: {
      auto* n = As<EvaluateNode>(s);
      stmt_ = n;
      if (auto* c = As<CallNode>(n->value))
        if (ExecIntrinsic(c, act)) return;
      TmpScope ts(this);
      Eval(n->value, act, Tmp());
      return;
    }
    case StmtKind::kKernel: Unsupported("nested kernel", s->span);
    case StmtKind::kAttr: {
      auto* a = As<AttrStmtNode>(s);
      if (a->key == "tl.buffer_bind") BindBuffer(a, act);
      if (a->key == "tl.tma_multicast") {  // the TMA loads inside land in every block of the cluster mask
        const int64_t saved = tma_multicast_;
        auto* mask = As<IntImmNode>(a->value);
        TL_ICHECK(mask, "tl.tma_multicast takes a constant mask");
        tma_multicast_ = mask->value;
        Exec(a->body, act);
        tma_multicast_ = saved;
        return;
      }
      Exec(a->body, act);
      return;
    }
    default: Unsupported("tile operation reached the emulator; it runs thread-level IR only", s->span);
  }
}

void Executor::BindBuffer(const AttrStmtNode* a, const Lanes& act) {
  // A global tensor at a run-time address (T.make_tensor of a pointer-table element): host memory here, as
  // every global tensor; its accesses are checked against the shape the program gave it.
  if (act.empty()) return;
  TmpScope ts(this);
  Slot* addr = Tmp();
  Eval(a->value, act, addr);
  int64_t v = addr[act[0]].i;
  for (int t : act)
    if (addr[t].i != v)
      Unsupported("the address of tensor '" + a->node->name + "' differs between threads " +
                      std::to_string(act[0]) + " and " + std::to_string(t) +
                      " (a pointer table read must be the same in the whole block)",
                  a->span);
  if (v == 0)
    throw UserError(ErrorKind::kArgument,
                    "emulator: tensor '" + a->node->name +
                        "' is bound to the null address (its pointer table "
                        "entry is 0)",
                    a->span);
  auto& slot = mems_[a->node.get()];
  if (!slot) {
    slot = std::make_unique<Mem>();
    slot->buf = a->node.get();
    slot->t = a->node->dtype;
    slot->esize = a->node->dtype.bytes();
    slot->n = 1;
    for (const Expr& e : a->node->shape) {
      slot->shape.push_back(HostInt(e));
      slot->n *= slot->shape.back();
    }
  }
  slot->data = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(v));
}

void Executor::ExecFor(const ForNode* n, const Lanes& act) {
  stmt_ = n;
  if (n->for_kind == ForKind::kParallel || n->for_kind == ForKind::kPipelined)
    Unsupported(std::string("loop kind ") + ForKindName(n->for_kind) + " in thread-level IR", n->span);
  std::vector<int64_t> lo(T_), ext(T_);
  bool uniform = true;
  {
    TmpScope ts(this);
    Slot* mn = Tmp();
    Slot* ex = Tmp();
    Eval(n->min, act, mn);
    Eval(n->extent, act, ex);
    for (int t : act) {
      lo[t] = AsInt(mn[t], n->min->dtype);
      ext[t] = AsInt(ex[t], n->extent->dtype);
      uniform &= lo[t] == lo[act[0]] && ext[t] == ext[act[0]];
    }
  }
  Binding& b = vars_[n->var.get()];
  DataType vt = n->var->dtype;
  if (uniform) {
    for (int64_t i = 0; i < ext[act[0]]; ++i) {
      b.uniform = true;
      b.u.i = WrapInt(lo[act[0]] + i, vt);
      Exec(n->body, act);
    }
    return;
  }
  if (b.v.size() < static_cast<size_t>(T_)) b.v.resize(T_);
  Lanes sub;
  for (int64_t i = 0;; ++i) {
    sub.clear();
    for (int t : act)
      if (i < ext[t]) {
        sub.push_back(t);
        b.v[t].i = WrapInt(lo[t] + i, vt);
      }
    if (sub.empty()) break;
    b.uniform = false;
    Exec(n->body, sub);
  }
}

void Executor::ExecStore(const StoreNode* n, const Lanes& act) {
  stmt_ = n;
  if (n->value->dtype.lanes() != 1) Unsupported("vector store of " + n->value->dtype.str(), n->span);
  TmpScope ts(this);
  Slot* v = Tmp();
  Slot* flat = Tmp();
  Eval(n->value, act, v);
  Locate(n->buffer, n->indices, act, flat);
  Mem& m = MemOf(n->buffer.get());
  DataType vt = n->value->dtype;
  for (int t : act) {
    if (flat[t].i < 0) continue;
    Write(m, t, flat[t].i, vt == m.t ? v[t] : Convert(v[t], vt, m.t));
  }
  NoteBanks(m, act, flat, m.esize, true);
}

// ------------------------------------------------------------------------------- expressions

Executor::Binding& Executor::Bind(const VarNode* v) {
  Binding& b = vars_[v];
  b.uniform = false;
  if (b.v.size() < static_cast<size_t>(T_)) b.v.resize(T_);
  return b;
}

Slot* Executor::Tmp() {
  if (tmp_top_ == tmp_.size()) tmp_.emplace_back(new Slot[static_cast<size_t>(T_)]);
  return tmp_[tmp_top_++].get();
}

void Executor::Eval(const Expr& e, const Lanes& act, Slot* out) {
  res_->lane_ops += static_cast<int64_t>(act.size());
  switch (e->kind) {
    case ExprKind::kIntImm: {
      Slot v;
      v.i = static_cast<const IntImmNode*>(e.get())->value;
      for (int t : act) out[t] = v;
      return;
    }
    case ExprKind::kFloatImm: {
      Slot v;
      v.f = RoundFloat(static_cast<const FloatImmNode*>(e.get())->value, e->dtype);
      for (int t : act) out[t] = v;
      return;
    }
    case ExprKind::kStringImm: Unsupported("string literal used as a value");
    case ExprKind::kVar: {
      auto* v = static_cast<const VarNode*>(e.get());
      auto it = vars_.find(v);
      if (it == vars_.end()) Unsupported("unbound variable '" + v->name + "' (missing from syms?)");
      const Binding& b = it->second;
      if (b.uniform) {
        for (int t : act) out[t] = b.u;
      } else {
        for (int t : act) out[t] = b.v[t];
      }
      return;
    }
    case ExprKind::kBinary: EvalBinary(static_cast<const BinaryNode*>(e.get()), act, out); return;
    case ExprKind::kNot: {
      auto* n = static_cast<const NotNode*>(e.get());
      Eval(n->a, act, out);
      for (int t : act) out[t].i = !Truthy(out[t], n->a->dtype);
      return;
    }
    case ExprKind::kCast: {
      auto* n = static_cast<const CastNode*>(e.get());
      if (e->dtype.lanes() != 1) Unsupported("vector cast to " + e->dtype.str());
      Eval(n->value, act, out);
      for (int t : act) out[t] = Convert(out[t], n->value->dtype, e->dtype);
      return;
    }
    case ExprKind::kSelect: {
      // Only the chosen side is evaluated, so that `select(i < n, A[i], 0)` guards its load.
      auto* n = static_cast<const SelectNode*>(e.get());
      Lanes yes, no;
      {
        TmpScope ts(this);
        Slot* c = Tmp();
        Eval(n->cond, act, c);
        for (int t : act) (Truthy(c[t], n->cond->dtype) ? yes : no).push_back(t);
      }
      if (!yes.empty()) Eval(n->true_value, yes, out);
      if (!no.empty()) Eval(n->false_value, no, out);
      return;
    }
    case ExprKind::kCall: EvalCall(static_cast<const CallNode*>(e.get()), act, out); return;
    case ExprKind::kBufferLoad: EvalLoad(static_cast<const BufferLoadNode*>(e.get()), act, out); return;
  }
}

namespace {
int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorModInt(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
}  // namespace

void Executor::EvalBinary(const BinaryNode* n, const Lanes& act, Slot* out) {
  const BinaryOp op = n->op;
  if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {  // short-circuit, as the printed C does
    Eval(n->a, act, out);
    Lanes rest;
    for (int t : act) {
      bool a = Truthy(out[t], n->a->dtype);
      out[t].i = a;
      if (a == (op == BinaryOp::kAnd)) rest.push_back(t);
    }
    if (rest.empty()) return;
    TmpScope ts(this);
    Slot* y = Tmp();
    Eval(n->b, rest, y);
    for (int t : rest) out[t].i = Truthy(y[t], n->b->dtype);
    return;
  }
  TmpScope ts(this);
  Slot* y = Tmp();
  Eval(n->a, act, out);
  Eval(n->b, act, y);
  DataType t = n->a->dtype;
  if (n->b->dtype != t)
    for (int l : act) y[l] = Convert(y[l], n->b->dtype, t);
  auto each = [&](auto f) {
    for (int l : act) out[l] = f(out[l], y[l]);
  };
  auto cmp = [&](auto f) {
    for (int l : act) out[l].i = f(out[l], y[l]) ? 1 : 0;
  };
  if (t.is_float()) {
    const DataType rt = n->dtype;
    auto ar = [&](auto f) {
      for (int l : act) out[l].f = RoundFloat(f(out[l].f, y[l].f), rt);
    };
    switch (op) {
      case BinaryOp::kAdd: ar([](double a, double b) { return a + b; }); return;
      case BinaryOp::kSub: ar([](double a, double b) { return a - b; }); return;
      case BinaryOp::kMul: ar([](double a, double b) { return a * b; }); return;
      case BinaryOp::kDiv: ar([](double a, double b) { return a / b; }); return;
      case BinaryOp::kMod: ar([](double a, double b) { return std::fmod(a, b); }); return;
      case BinaryOp::kFloorDiv: ar([](double a, double b) { return std::floor(a / b); }); return;
      case BinaryOp::kFloorMod: ar([](double a, double b) { return a - std::floor(a / b) * b; }); return;
      case BinaryOp::kMin: ar([](double a, double b) { return std::fmin(a, b); }); return;
      case BinaryOp::kMax: ar([](double a, double b) { return std::fmax(a, b); }); return;
      case BinaryOp::kEQ: cmp([](Slot a, Slot b) { return a.f == b.f; }); return;
      case BinaryOp::kNE: cmp([](Slot a, Slot b) { return a.f != b.f; }); return;
      case BinaryOp::kLT: cmp([](Slot a, Slot b) { return a.f < b.f; }); return;
      case BinaryOp::kLE: cmp([](Slot a, Slot b) { return a.f <= b.f; }); return;
      case BinaryOp::kGT: cmp([](Slot a, Slot b) { return a.f > b.f; }); return;
      case BinaryOp::kGE: cmp([](Slot a, Slot b) { return a.f >= b.f; }); return;
      default: break;
    }
    Unsupported(std::string("float operator ") + BinaryOpName(op));
  }
  const DataType rt = n->dtype;
  const bool u64 = t.is_uint() && t.bits() == 64;
  if (op == BinaryOp::kShl || op == BinaryOp::kShr) {
    // PTX shl / shr (PTX ISA, "Logic and Shift Instructions"): the count is read as unsigned and
    // values past the register width are clamped to it: shl gives 0, shr.u gives 0, shr.s fills
    // with the sign bit. The operand's type width is the register width here.
    const int w = t.bits();
    for (int l : act) {
      const int64_t a = out[l].i, c = y[l].i;
      const uint64_t count = (t.is_int() && c < 0) ? ~uint64_t(0) : static_cast<uint64_t>(c);
      if (count >= uint64_t(w) && opt_.check_shift_counts)
        Report("shift_count", l, [&] {
          return std::string(op == BinaryOp::kShl ? "<<" : ">>") + " by " + std::to_string(c) + " on " +
                 t.str() + ", outside [0, " + std::to_string(w) + "): the result is clamped (" +
                 (op == BinaryOp::kShl || !t.is_int() ? "0" : "the sign bit") + ")";
        });
      int64_t r;
      if (op == BinaryOp::kShl)
        r = count >= uint64_t(w) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << count);
      else if (t.is_int())  // slots hold signed values sign-extended to 64 bits
        r = count >= uint64_t(w) ? (a < 0 ? -1 : 0) : (a < 0 ? ~(~a >> count) : a >> count);
      else  // unsigned values are held zero-extended (uint64: its bit pattern)
        r = count >= uint64_t(w) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) >> count);
      out[l].i = WrapInt(r, rt);
    }
    return;
  }
  auto ar = [&](auto f) {
    for (int l : act) out[l].i = WrapInt(f(out[l].i, y[l].i), rt);
  };
  // Division by zero is undefined on the GPU; the emulator yields 0 rather than trapping.
  switch (op) {
    case BinaryOp::kAdd:
      ar([](int64_t a, int64_t b) {
        return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      });
      return;
    case BinaryOp::kSub:
      ar([](int64_t a, int64_t b) {
        return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
      });
      return;
    case BinaryOp::kMul:
      ar([](int64_t a, int64_t b) {
        return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      });
      return;
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
      if (u64) {
        ar([](int64_t a, int64_t b) {
          return b ? static_cast<int64_t>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b)) : 0;
        });
      } else if (op == BinaryOp::kDiv) {
        ar([](int64_t a, int64_t b) { return b == 0 || (b == -1 && a == INT64_MIN) ? 0 : a / b; });
      } else {
        ar([](int64_t a, int64_t b) {
          return b == 0 || (b == -1 && a == INT64_MIN) ? 0 : FloorDivInt(a, b);
        });
      }
      return;
    case BinaryOp::kMod:
    case BinaryOp::kFloorMod:
      if (u64) {
        ar([](int64_t a, int64_t b) {
          return b ? static_cast<int64_t>(static_cast<uint64_t>(a) % static_cast<uint64_t>(b)) : 0;
        });
      } else if (op == BinaryOp::kMod) {
        ar([](int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; });
      } else {
        ar([](int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : FloorModInt(a, b); });
      }
      return;
    case BinaryOp::kBitAnd: ar([](int64_t a, int64_t b) { return a & b; }); return;
    case BinaryOp::kBitOr: ar([](int64_t a, int64_t b) { return a | b; }); return;
    case BinaryOp::kBitXor: ar([](int64_t a, int64_t b) { return a ^ b; }); return;
    default: break;
  }
  if (u64) {
    auto U = [](Slot s) { return static_cast<uint64_t>(s.i); };
    switch (op) {
      case BinaryOp::kMin: each([&](Slot a, Slot b) { return U(a) < U(b) ? a : b; }); return;
      case BinaryOp::kMax: each([&](Slot a, Slot b) { return U(a) < U(b) ? b : a; }); return;
      case BinaryOp::kEQ: cmp([&](Slot a, Slot b) { return U(a) == U(b); }); return;
      case BinaryOp::kNE: cmp([&](Slot a, Slot b) { return U(a) != U(b); }); return;
      case BinaryOp::kLT: cmp([&](Slot a, Slot b) { return U(a) < U(b); }); return;
      case BinaryOp::kLE: cmp([&](Slot a, Slot b) { return U(a) <= U(b); }); return;
      case BinaryOp::kGT: cmp([&](Slot a, Slot b) { return U(a) > U(b); }); return;
      case BinaryOp::kGE: cmp([&](Slot a, Slot b) { return U(a) >= U(b); }); return;
      default: break;
    }
  } else {
    switch (op) {
      case BinaryOp::kMin: each([](Slot a, Slot b) { return a.i < b.i ? a : b; }); return;
      case BinaryOp::kMax: each([](Slot a, Slot b) { return a.i < b.i ? b : a; }); return;
      case BinaryOp::kEQ: cmp([](Slot a, Slot b) { return a.i == b.i; }); return;
      case BinaryOp::kNE: cmp([](Slot a, Slot b) { return a.i != b.i; }); return;
      case BinaryOp::kLT: cmp([](Slot a, Slot b) { return a.i < b.i; }); return;
      case BinaryOp::kLE: cmp([](Slot a, Slot b) { return a.i <= b.i; }); return;
      case BinaryOp::kGT: cmp([](Slot a, Slot b) { return a.i > b.i; }); return;
      case BinaryOp::kGE: cmp([](Slot a, Slot b) { return a.i >= b.i; }); return;
      default: break;
    }
  }
  Unsupported(std::string("integer operator ") + BinaryOpName(op));
}

}  // namespace tl::emu
