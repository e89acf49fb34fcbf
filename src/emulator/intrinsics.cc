// Thread-level builtins of the emulator, written from NVIDIA's PTX ISA (not from the compiler's
// layout tables): __syncthreads, cp.async with commit/wait groups, ldmatrix.m8n8, mma.sync
// m16n8k16 (f16/bf16 -> f32; m16n8k32 in intrinsics_mma8.cc), shfl.xor, warp votes, atomic add and the math
// intrinsics.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include "emulator/executor.h"
#include "emulator/intrinsic_args.h"

namespace tl::emu {
namespace {

double Extreme(DataType t, bool max) {
  switch (t.code()) {
    case DataType::Code::kBFloat:
      return max ? DecodeMinifloat(0x7f7f, 8, 7, false) : -DecodeMinifloat(0x7f7f, 8, 7, false);
    case DataType::Code::kFloat8E4M3: return max ? 448.0 : -448.0;
    case DataType::Code::kFloat8E5M2: return max ? 57344.0 : -57344.0;
    case DataType::Code::kFloat4E2M1: return max ? 6.0 : -6.0;
    case DataType::Code::kFloat6E2M3: return max ? 7.5 : -7.5;
    case DataType::Code::kFloat6E3M2: return max ? 28.0 : -28.0;
    default: break;
  }
  double v = t.bits() == 16   ? 65504.0
             : t.bits() == 32 ? std::numeric_limits<float>::max()
                              : std::numeric_limits<double>::max();
  return max ? v : -v;
}

}  // namespace

bool Executor::ExecIntrinsic(const CallNode* c, const Lanes& act) {
  const std::string& op = c->op;
  if (op == "tl.memory_fence")
    return true;  // (an ordered atomic's fence: the emulator runs one thread at a time)
  if (op == "tl.syncthreads") {
    if (InFibers())
      FiberBarrier(act, 0, T_, "__syncthreads()");
    else
      Barrier(act);
    if (tc_) Tcgen05Share(act);
  } else if (op == "tl.sync_grid") {  // every block of the grid (emulator.cc)
    if (InFibers())
      Unsupported("T.sync_grid in warp-specialised code is not emulated", stmt_ ? stmt_->span : Span{});
    Barrier(act);
    SyncGrid(act, stmt_ ? stmt_->span : Span{});
  } else if (op == "tl.cluster_sync" || op == "tl.cluster_arrive" || op == "tl.cluster_arrive_relaxed" ||
             op == "tl.cluster_wait") {  // barrier.cluster (emulator.cc)
    if (op == "tl.cluster_sync") {
      ClusterBarrier("tl.cluster_arrive", act);
      ClusterBarrier("tl.cluster_wait", act);
    } else {
      ClusterBarrier(op, act);
    }
    if (tc_) Tcgen05Share(act);
  } else if (ExecClc(c, act)) {                // cluster launch control (emulator.cc)
  } else if (op == "tl.named_barrier_sync") {  // bar.sync id, count (warp-specialised consumers)
    const int64_t id = ConstArg(c, 0), count = ConstArg(c, 1);
    if (InFibers()) {
      FiberBarrier(act, id, count, ("bar.sync " + std::to_string(id)).c_str());
    } else {
      if (static_cast<int64_t>(act.size()) != count)
        Report("barrier_divergence", act.empty() ? 0 : act[0], [&] {
          return "bar.sync " + std::to_string(id) + " expects " + std::to_string(count) +
                 " threads, reached by " + std::to_string(act.size());
        });
      ++epoch_;
    }
    if (tc_) Tcgen05Share(act);
  } else if (op == "tl.cp_async") {
    CpAsync(c, act);
  } else if (op == "tl.cp_async_commit") {
    for (int t : act) {
      async_[t].committed.push_back(std::move(async_[t].open));  // an empty group is a group too
      async_[t].open.clear();
    }
  } else if (op == "tl.cp_async_wait") {
    CpAsyncWait(ConstArg(c, 0), act);
  } else if (op == "tl.vector_store" || op == "tl.vector_load") {
    VectorAccess(c, act);
  } else if (op == "tl.ldmatrix") {
    LdMatrix(c, act);
  } else if (op == "tl.stmatrix") {
    StMatrix(c, act);
  } else if (op == "tl.mma_sync") {
    MmaSync(c, act);
  } else if (op == "tl.mma_sync_blockscaled") {
    MmaSyncBlockScaled(c, act);
  } else if (op == "tl.mfma") {  // AMD MFMA: intrinsics_hip.cc
    Mfma(c, act);
  } else if (op == "tl.fp8_to_fnuz") {  // AMD fp8 MFMA operands: intrinsics_hip.cc
    Fp8ToFnuz(c, act);
  } else if (op == "tl.fp4_pack") {  // AMD fp4 MFMA operands: intrinsics_hip.cc
    Fp4Pack(c, act);
  } else if (op == "tl.fp6_pack") {  // AMD fp6 MFMA operands: intrinsics_hip.cc
    Fp6Pack(c, act);
  } else if (ExecHopper(c, act)) {   // wgmma (intrinsics_hopper.cc)
  } else if (ExecTcgen05(c, act)) {  // tensor memory, tcgen05 (intrinsics_tcgen05.cc)
  } else if (op == "tl.atomic_add" || op == "atomic_add" || op == "tl.atomic_max" || op == "tl.atomic_min" ||
             op == "tl.atomic_fetch_add" || op == "atomic_fetch_add") {
    TmpScope ts(this);
    AtomicAdd(c, act, Tmp());
  } else if (op == "tl.atomic_add_vec") {
    AtomicAddVec(c, act);
  } else if (ExecMetalIntrinsic(c, act)) {  // simdgroup_matrix calls: intrinsics_metal.cc
    return true;
  } else if (ExecAscend(c, act)) {  // the Ascend core's pipes: intrinsics_ascend.cc
    return true;
  } else if ((op == "print" || op == "device_assert") && c->args.size() == 2) {
    // print(message, value) prints per lane, as the CPU backend does; device_assert(cond, message)
    // reports every lane whose condition is false.
    bool is_print = op == "print";
    auto* msg = As<StringImmNode>(c->args[is_print ? 0 : 1]);
    const Expr& x = c->args[is_print ? 1 : 0];
    TmpScope ts(this);
    Slot* v = Tmp();
    Eval(x, act, v);
    std::string text = msg ? msg->value : "";
    for (int t : act) {
      if (is_print) {
        std::printf("%s%.9g\n", text.c_str(), AsDouble(v[t], x->dtype));
      } else if (AsDouble(v[t], x->dtype) == 0) {
        Report("assert", t, [&] { return "T.device_assert failed: " + text; });
      }
    }
  } else {
    return false;
  }
  res_->lane_ops += static_cast<int64_t>(act.size());
  return true;
}

void Executor::EvalCall(const CallNode* c, const Lanes& act, Slot* out) {
  const std::string& op = c->op;
  const DataType rt = c->dtype;
  if (op == "tl.thread_idx") {
    for (int t : act) out[t].i = t;
    return;
  }
  if (EvalClc(c, act, out)) return;
  if (op == "tl.cluster_ctarank") {  // %cluster_ctarank: 0 outside a cluster launch
    for (int t : act) out[t].i = rank_;
    return;
  }
  if (op == "tl.shfl_xor") return ShflXor(c, act, out);
  if (op == "tl.any_sync" || op == "tl.all_sync") return Vote(c, act, out);
  if (op == "tl.shfl_sync") return ShflSync(c, act, out);
  if (op == "tl.call_extern")
    TL_USER_ERROR(kUnsupported, Span{}, "the emulator cannot run T.call_extern: it calls user CUDA C++ code");
  if (EvalSubgroup(c, act, out)) return;  // OpenCL sub-groups (intrinsics_opencl.cc)
  if (op == "tl.reinterpret") {           // the value's bytes in its dtype, read back as the call's dtype
    TmpScope ts(this);
    Slot* x = Tmp();
    Eval(c->args[0], act, x);
    DataType from = c->args[0]->dtype;
    for (int t : act) {
      unsigned char bytes[8] = {0};
      StoreScalar(bytes, from, x[t]);
      out[t] = LoadScalar(bytes, rt);
    }
    return;
  }
  // cvt.rna.tf32.f32 (intrinsics_tf32.cc)
  if (op == "tl.to_tf32") return ToTf32(c, act, out);
  if (op == "tl.bitwise_xor") {  // integer xor (shared-memory swizzles)
    TmpScope ts(this);
    Slot* x = Tmp();
    Slot* y = Tmp();
    Eval(c->args[0], act, x);
    Eval(c->args[1], act, y);
    for (int t : act) out[t].i = WrapInt(x[t].i ^ y[t].i, rt);
    return;
  }
  if (op == "tl.atomic_add" || op == "atomic_add" || op == "tl.atomic_max" || op == "tl.atomic_min" ||
      op == "tl.atomic_fetch_add" || op == "atomic_fetch_add")
    return AtomicAdd(c, act, out);  // the previous values (T.atomic_add(..., return_prev=True))
  if (op == "tl.atomic_load" || op == "tl.atomic_store") return AtomicLoadStore(c, act, out);
  if (EvalHopper(c, act, out)) return;   // wgmma descriptors (intrinsics_hopper.cc)
  if (EvalTcgen05(c, act, out)) return;  // tcgen05 descriptors (intrinsics_tcgen05.cc)
  if (op == "min_value" || op == "max_value") {
    bool mx = op == "max_value";
    Slot v;
    if (rt.is_float()) {
      v.f = Extreme(rt, mx);
    } else if (rt.is_bool()) {
      v.i = mx;
    } else if (rt.is_uint()) {
      v.i = mx ? WrapInt(-1, rt) : 0;
    } else {
      v.i = mx ? WrapInt(static_cast<int64_t>((~0ull) >> (65 - rt.bits())), rt)
               : WrapInt(int64_t{1} << (rt.bits() - 1), rt);
    }
    for (int t : act) out[t] = v;
    return;
  }
  if (ExecIntrinsic(c, act)) {
    for (int t : act) out[t].i = 0;
    return;
  }
  // Math intrinsics: evaluated in double, then rounded to the call's dtype.
  TmpScope ts(this);
  std::vector<Slot*> a(c->args.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = Tmp();
    Eval(c->args[i], act, a[i]);
  }
  auto arg = [&](size_t i, int t) { return AsDouble(a[i][t], c->args[i]->dtype); };
  auto unary = [&](double (*f)(double)) {
    if (a.size() != 1) Bad(c, "expects one argument");
    for (int t : act) {
      Slot v;
      v.f = f(arg(0, t));
      out[t] = Convert(v, DataType::Float(64), rt);
    }
  };
  if (op == "popcount" || op == "clz") {  // counted in the operand type's width
    const int w = c->args[0]->dtype.bits();
    for (int t : act) {
      uint64_t v = static_cast<uint64_t>(a[0][t].i);
      if (w < 64) v &= (uint64_t(1) << w) - 1;
      int n = 0;
      if (op == "popcount") {
        for (; v; v &= v - 1) ++n;
      } else {
        while (n < w && !((v >> (w - 1 - n)) & 1)) ++n;
      }
      out[t].i = WrapInt(n, rt);
    }
    return;
  }
  if (op == "abs" && !rt.is_float()) {
    for (int t : act) out[t].i = WrapInt(a[0][t].i < 0 ? -a[0][t].i : a[0][t].i, rt);
    return;
  }
  if (op == "exp") return unary([](double x) { return std::exp(x); });
  if (op == "exp2") return unary([](double x) { return std::exp2(x); });
  if (op == "log") return unary([](double x) { return std::log(x); });
  if (op == "log2") return unary([](double x) { return std::log2(x); });
  if (op == "sqrt") return unary([](double x) { return std::sqrt(x); });
  if (op == "rsqrt") return unary([](double x) { return 1.0 / std::sqrt(x); });
  if (op == "abs") return unary([](double x) { return std::fabs(x); });
  if (op == "tanh") return unary([](double x) { return std::tanh(x); });
  if (op == "sin") return unary([](double x) { return std::sin(x); });
  if (op == "cos") return unary([](double x) { return std::cos(x); });
  if (op == "floor") return unary([](double x) { return std::floor(x); });
  if (op == "ceil") return unary([](double x) { return std::ceil(x); });
  if (op == "log10") return unary([](double x) { return std::log10(x); });
  if (op == "erf") return unary([](double x) { return std::erf(x); });
  if (op == "sigmoid") return unary([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  if (op == "round") return unary([](double x) { return std::nearbyint(x); });  // half to even
  if (op == "trunc") return unary([](double x) { return std::trunc(x); });
  if (op == "pow" || op == "fma") {
    if (a.size() != (op == "pow" ? 2u : 3u)) Bad(c, "wrong number of arguments");
    for (int t : act) {
      Slot v;
      v.f = op == "pow" ? std::pow(arg(0, t), arg(1, t)) : std::fma(arg(0, t), arg(1, t), arg(2, t));
      out[t] = Convert(v, DataType::Float(64), rt);
    }
    return;
  }
  TL_USER_ERROR(kUnsupported, Span{}, "emulator: unknown intrinsic '", op, "'");
}

// ------------------------------------------------------------------------------- barrier

void Executor::Barrier(const Lanes& act) {
  if (static_cast<int>(act.size()) != T_) {
    // Name the first thread that does not arrive.
    int missing = 0;
    for (int t : act) {
      if (t != missing) break;
      ++missing;
    }
    Report("barrier_divergence", missing, [&] {
      return "__syncthreads() is reached by " + std::to_string(act.size()) + " of " + std::to_string(T_) +
             " threads; this thread does not reach it (a barrier in divergent code)";
    });
  }
  ++epoch_;
}

// ------------------------------------------------------------------------------- cp.async

void Executor::CpAsync(const CallNode* c, const Lanes& act) {
  // cp.async.{ca,cg}.shared.global [dst], [src], bytes, src-size (0 when !valid): the bytes are
  // captured now and land in shared memory at the cp.async.wait_group that completes the group.
  const BufferLoadNode* dl = Operand(c, 0);
  const BufferLoadNode* sl = Operand(c, 1);
  int64_t nbytes = ConstArg(c, 2);
  if (nbytes != 4 && nbytes != 8 && nbytes != 16) Bad(c, "bytes must be 4, 8 or 16");
  if (c->args.size() != 4) Bad(c, "expects (dst, src, bytes, valid)");
  Mem& dm = MemOf(dl->buffer.get());
  Mem& sm = MemOf(sl->buffer.get());
  if (!dm.shared() || !sm.global()) Bad(c, "copies from global to shared memory");
  if (nbytes % dm.esize || nbytes % sm.esize) Bad(c, "bytes must be a multiple of the element sizes");
  TmpScope ts(this);
  Slot* valid = Tmp();
  Slot* df = Tmp();
  Slot* sf = Tmp();
  Eval(c->args[3], act, valid);
  Lanes reading;
  for (int t : act)
    if (AsInt(valid[t], c->args[3]->dtype)) reading.push_back(t);
  Locate(dl->buffer, dl->indices, act, df, nbytes / dm.esize);
  Locate(sl->buffer, sl->indices, reading, sf, nbytes / sm.esize);
  size_t ri = 0;
  for (int t : act) {
    bool reads = ri < reading.size() && reading[ri] == t;
    if (reads) ++ri;
    if (df[t].i < 0) continue;
    AsyncCopy cp{&dm, df[t].i, static_cast<int>(nbytes), !reads || sf[t].i < 0, {}, stmt_};
    if (!cp.zero_fill) std::memcpy(cp.bytes.data(), sm.Addr(t, sf[t].i), static_cast<size_t>(nbytes));
    // The copy may land any time before the wait: it conflicts with accesses of other threads
    // from now on.
    for (int64_t k = 0; k < nbytes / dm.esize; ++k) NoteWrite(dm, t, cp.dst_flat + k, false, false);
    async_[t].open.push_back(cp);
  }
  NoteBanks(dm, act, df, nbytes, true);
}

void Executor::VectorAccess(const CallNode* c, const Lanes& act) {
  // tl.vector_store(dst, x0, .., x{V-1}) and tl.vector_load(dst, src, V, valid): V consecutive
  // elements of a global tensor or shared tile in one 4/8/16-byte access, which must be aligned to its size
  // (the tensor's base is 16-byte aligned, so the first element's flat index is a multiple of V).
  bool store = c->op == "tl.vector_store";
  const BufferLoadNode* g = Operand(c, store ? 0 : 1);
  int64_t V = store ? static_cast<int64_t>(c->args.size()) - 1 : ConstArg(c, 2);
  Mem& gm = MemOf(g->buffer.get());
  int64_t bytes = V * gm.esize;
  if (!(gm.global() || gm.shared()) || (bytes != 4 && bytes != 8 && bytes != 16))
    Bad(c, "accesses 4, 8 or 16 bytes of a global tensor or a shared tile");
  if (!store && c->args.size() != 4) Bad(c, "expects (dst, src, lanes, valid)");
  TmpScope ts(this);
  Slot* gf = Tmp();
  Lanes use = act;
  if (!store) {
    Slot* valid = Tmp();
    Eval(c->args[3], act, valid);
    use.clear();
    for (int t : act)
      if (AsInt(valid[t], c->args[3]->dtype)) use.push_back(t);
  }
  Locate(g->buffer, g->indices, use, gf, V);
  for (int t : use)
    if (gf[t].i >= 0 && gf[t].i % V != 0) {
      Report("misaligned", t, [&] {
        return "the " + std::to_string(bytes) + "-byte vector access of '" + g->buffer->name +
               "' at element " + std::to_string(gf[t].i) + " is not " + std::to_string(bytes) +
               "-byte aligned; it was not performed";
      });
      gf[t].i = -1;
    }
  if (store) {
    std::vector<Slot*> xs(static_cast<size_t>(V));
    for (int64_t i = 0; i < V; ++i) {
      xs[i] = Tmp();
      Eval(c->args[1 + i], act, xs[i]);
    }
    for (int t : act) {
      if (gf[t].i < 0) continue;
      for (int64_t i = 0; i < V; ++i) {
        DataType xt = c->args[1 + i]->dtype;
        Write(gm, t, gf[t].i + i, xt == gm.t ? xs[i][t] : Convert(xs[i][t], xt, gm.t));
      }
    }
    NoteBanks(gm, act, gf, bytes, true);
    return;
  }
  const BufferLoadNode* d = Operand(c, 0);
  Mem& dm = MemOf(d->buffer.get());
  Slot* df = Tmp();
  Locate(d->buffer, d->indices, act, df, V);
  size_t ui = 0;
  for (int t : act) {
    bool reads = ui < use.size() && use[ui] == t;
    if (reads) ++ui;
    if (df[t].i < 0) continue;
    for (int64_t i = 0; i < V; ++i) {
      Slot v;
      if (reads && gf[t].i >= 0) {
        v = Read(gm, t, gf[t].i + i);
      } else {
        Slot z;
        z.i = 0;
        v = Convert(z, DataType::Int(32), gm.t);  // zero-filled when not valid
      }
      Write(dm, t, df[t].i + i, gm.t == dm.t ? v : Convert(v, gm.t, dm.t));
    }
  }
  NoteBanks(gm, use, gf, bytes, false);
  NoteBanks(dm, act, df, V * dm.esize, true);
}

void Executor::LandAsyncCopy(int t, const AsyncCopy& cp) {
  const StmtNode* at = stmt_;
  stmt_ = cp.stmt;  // the write is the copy's (its line in reports)
  Mem& m = *cp.dst;
  for (int64_t k = 0; k < cp.nbytes / m.esize; ++k) NoteWrite(m, t, cp.dst_flat + k);
  uint8_t* dst = m.Addr(t, cp.dst_flat);
  if (cp.zero_fill)
    std::memset(dst, 0, static_cast<size_t>(cp.nbytes));
  else
    std::memcpy(dst, cp.bytes.data(), static_cast<size_t>(cp.nbytes));
  stmt_ = at;
}

void Executor::CpAsyncWait(int64_t n, const Lanes& act) {
  for (int t : act) {
    auto& q = async_[t].committed;
    while (static_cast<int64_t>(q.size()) > n) {
      for (const AsyncCopy& cp : q.front()) LandAsyncCopy(t, cp);
      q.pop_front();
    }
  }
}

// ------------------------------------------------------------------------------- ldmatrix

void Executor::StMatrix(const CallNode* c, const Lanes& act) {
  // stmatrix.sync.aligned.m8n8.x{num}.shared.b16 (PTX ISA, sm_90): lanes 8q..8q+7 give the row addresses of
  // matrix q (8 consecutive 16-bit elements each); lane l's register q (src elements 2q, low half, and 2q+1)
  // is written to row l/4, columns 2*(l%4) and 2*(l%4)+1 of matrix q.
  int64_t trans = ConstArg(c, 0), num = ConstArg(c, 1);
  if (num != 1 && num != 2 && num != 4) Bad(c, "num must be 1, 2 or 4");
  if (trans) Bad(c, "the .trans form is not emulated");
  const BufferLoadNode* dl = Operand(c, 2);
  const BufferLoadNode* sl = Operand(c, 3);
  Mem& dm = MemOf(dl->buffer.get());
  Mem& sm = MemOf(sl->buffer.get());
  if (!dm.shared() || sm.shared() || sm.global()) Bad(c, "stores from a local buffer into shared memory");
  if (dm.esize != 2 || sm.esize != 2) Bad(c, "operands must both have a 16-bit dtype");
  Lanes full = FullWarps(act, "stmatrix");
  if (full.empty()) return;
  Lanes suppliers;
  for (int t : full)
    if ((t & 31) < 8 * num) suppliers.push_back(t);
  TmpScope ts(this);
  Slot* df = Tmp();
  Slot* sf = Tmp();
  Locate(dl->buffer, dl->indices, suppliers, df, 8);
  Locate(sl->buffer, sl->indices, full, sf, 2 * num);
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    for (int l = 0; l < 32; ++l) {
      const int t = base + l;
      if (sf[t].i < 0) continue;
      for (int q = 0; q < num; ++q) {
        const int s = base + 8 * q + l / 4;  // the lane that gave this row's address
        if (df[s].i < 0) continue;
        for (int j = 0; j < 2; ++j) {
          uint16_t v;
          NoteRead(sm, t, sf[t].i + 2 * q + j);
          std::memcpy(&v, sm.Addr(t, sf[t].i + 2 * q + j), 2);
          const int64_t e = df[s].i + 2 * (l % 4) + j;
          NoteWrite(dm, t, e);
          std::memcpy(dm.Addr(t, e), &v, 2);
        }
      }
    }
  }
}

void Executor::LdMatrix(const CallNode* c, const Lanes& act) {
  // ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: lanes 8q..8q+7 give the row addresses of
  // matrix q (8 consecutive 16-bit elements each). Afterwards lane l holds in register q the
  // elements (row l/4, cols 2*(l%4), 2*(l%4)+1) of matrix q; with .trans the elements
  // (rows 2*(l%4), 2*(l%4)+1, col l/4). Register q is dst elements 2q (low half) and 2q+1.
  int64_t trans = ConstArg(c, 0), num = ConstArg(c, 1);
  if (num != 1 && num != 2 && num != 4) Bad(c, "num must be 1, 2 or 4");
  const BufferLoadNode* dl = Operand(c, 2);
  const BufferLoadNode* sl = Operand(c, 3);
  Mem& dm = MemOf(dl->buffer.get());
  Mem& sm = MemOf(sl->buffer.get());
  if (!sm.shared() || dm.shared() || dm.global()) Bad(c, "loads from shared memory into a local buffer");
  // The instruction moves 16-bit elements; an 8-bit tile (int8 mma operands) is moved as its bytes,
  // two elements per 16-bit element, which only the non-transposed form keeps in order.
  if (dm.esize != sm.esize || (sm.esize != 2 && sm.esize != 1) || (sm.esize == 1 && trans))
    Bad(c, "operands must both have a 16-bit dtype (or an 8-bit one without .trans)");
  const int epr = 2 / static_cast<int>(sm.esize);  // elements per 16-bit element
  Lanes full = FullWarps(act, "ldmatrix");
  if (full.empty()) return;
  Lanes suppliers;
  for (int t : full)
    if ((t & 31) < 8 * num) suppliers.push_back(t);
  TmpScope ts(this);
  Slot* sf = Tmp();
  Slot* df = Tmp();
  Locate(sl->buffer, sl->indices, suppliers, sf, 8 * epr);
  Locate(dl->buffer, dl->indices, full, df, 2 * num * epr);
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    uint16_t mat[4][8][8];
    for (int q = 0; q < num; ++q)
      for (int r = 0; r < 8; ++r) {
        int s = base + 8 * q + r;
        for (int col = 0; col < 8; ++col) {
          mat[q][r][col] = 0;
          if (sf[s].i < 0) continue;
          for (int b = 0; b < epr; ++b) NoteRead(sm, s, sf[s].i + col * epr + b);
          std::memcpy(&mat[q][r][col], sm.Addr(s, sf[s].i + col * epr), 2);
        }
      }
    for (int l = 0; l < 32; ++l) {
      int t = base + l;
      if (df[t].i < 0) continue;
      uint16_t v[8];  // the lane's 2 * num 16-bit values, in register order
      for (int q = 0; q < num; ++q)
        for (int j = 0; j < 2; ++j) {
          int a = l / 4, b = 2 * (l % 4) + j;
          v[2 * q + j] = trans ? mat[q][b][a] : mat[q][a][b];
        }
      const int64_t e = df[t].i;
      const int n = 2 * num * epr;  // destination elements written
      if (dm.plain_local())
        std::memset(dm.written.data() + t * dm.n + e, 1, static_cast<size_t>(n));
      else
        for (int i = 0; i < n; ++i) NoteWrite(dm, t, e + i);
      std::memcpy(dm.Addr(t, e), v, static_cast<size_t>(4 * num));
    }
  }
}

// ------------------------------------------------------------------------------- mma.sync

void Executor::MmaSync(const CallNode* c, const Lanes& act) {
  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32, fragments per the PTX ISA
  // ("Matrix Fragments for mma.m16n8k16 with floating point type"), g = lane>>2, tg = lane%4:
  //   A a_i: row g + 8*(i in {2,3,6,7}), col 2*tg + (i&1) + 8*(i >= 4)
  //   B b_i: row 2*tg + (i&1) + 8*(i >= 2), col g
  //   C c_i: row g + 8*(i >= 2),            col 2*tg + (i&1)
  // Products of 16-bit floats are exact in double; the 16 products and C are summed in double and
  // the result rounded once to float32 (the hardware's internal order/precision is unspecified); with
  // float16 accumulators (.f16.f16.f16.f16) C is read as float16 and D rounded once to float16.
  if (StrArg(c, 0) == "m16n8k32") return MmaSyncK32(c, act);
  if (StrArg(c, 0) == "m16n8k8") return MmaSyncTf32(c, act);
  if (StrArg(c, 0) != "m16n8k16") Bad(c, "only shapes m16n8k16, m16n8k8 (tf32) and m16n8k32 are emulated");
  const std::string& ab = StrArg(c, 1);
  if (ab != "f16" && ab != "bf16") Bad(c, "ab_type must be f16 or bf16");
  const BufferLoadNode* ops[3] = {Operand(c, 2), Operand(c, 3), Operand(c, 4)};
  Mem* m[3];
  for (int i = 0; i < 3; ++i) {
    m[i] = &MemOf(ops[i]->buffer.get());
    if (m[i]->shared() || m[i]->global()) Bad(c, "operands must be local buffers");
  }
  if (m[0]->esize != 2 || m[1]->esize != 2) Bad(c, "A and B must have a 16-bit dtype");
  // C is float32, or float16 with f16 A and B (.f16.f16.f16.f16: D is rounded to float16 once).
  const DataType ct = m[2]->t;
  if (ct != DataType::Float(32) && !(ct == DataType::Float(16) && ab == "f16"))
    Bad(c, "C must be float32 (or float16 with f16 A and B)");
  Lanes full = FullWarps(act, "mma_sync");
  if (full.empty()) return;
  TmpScope ts(this);
  Slot* f[3];
  const int count[3] = {8, 4, 4};
  for (int i = 0; i < 3; ++i) {
    f[i] = Tmp();
    Locate(ops[i]->buffer, ops[i]->indices, full, f[i], count[i]);
  }
  const bool bf16 = ab == "bf16", c_f32 = ct == DataType::Float(32);
  for (size_t w = 0; w < full.size(); w += 32) {
    const int base = full[w];
    double A[16][16] = {}, B[16][8] = {}, D[16][8] = {};
    bool lane_ok[32];
    for (int l = 0; l < 32; ++l) {
      const int t = base + l, g = l >> 2, tg = l & 3;
      lane_ok[l] = f[0][t].i >= 0 && f[1][t].i >= 0 && f[2][t].i >= 0;
      if (!lane_ok[l]) continue;
      uint16_t a[8], b[4];
      ReadLocalRun(*m[0], t, f[0][t].i, a);
      ReadLocalRun(*m[1], t, f[1][t].i, b);
      for (int i = 0; i < 8; ++i) A[g + 8 * ((i >> 1) & 1)][2 * tg + (i & 1) + 8 * (i >= 4)] = LoadHalf(&a[i], bf16);
      for (int i = 0; i < 4; ++i) B[2 * tg + (i & 1) + 8 * (i >= 2)][g] = LoadHalf(&b[i], bf16);
      if (c_f32) {  // the float32 accumulator read directly (the checks still run)
        float x[4];
        ReadLocalRun(*m[2], t, f[2][t].i, x);
        for (int i = 0; i < 4; ++i) D[g + 8 * (i >= 2)][2 * tg + (i & 1)] = x[i];
      } else {
        for (int i = 0; i < 4; ++i) D[g + 8 * (i >= 2)][2 * tg + (i & 1)] = Read(*m[2], t, f[2][t].i + i).f;
      }
    }
    // D = C + the products summed in k order, per element; k outermost: 128 independent sums vectorised
    for (int k = 0; k < 16; ++k)
      for (int r = 0; r < 16; ++r)
        for (int col = 0; col < 8; ++col) D[r][col] += A[r][k] * B[k][col];
    for (int l = 0; l < 32; ++l) {
      if (!lane_ok[l]) continue;
      const int t = base + l, g = l >> 2, tg = l & 3;
      if (c_f32) {  // rounded once to float32 and stored directly
        float x[4];
        for (int i = 0; i < 4; ++i) x[i] = static_cast<float>(D[g + 8 * (i >= 2)][2 * tg + (i & 1)]);
        WriteLocalRun(*m[2], t, f[2][t].i, x);
      } else {
        for (int i = 0; i < 4; ++i) {
          Slot v;
          v.f = RoundFloat(D[g + 8 * (i >= 2)][2 * tg + (i & 1)], ct);
          Write(*m[2], t, f[2][t].i + i, v);
        }
      }
    }
  }
}

// ------------------------------------------------------------------------------- shfl, atomics

// vote.sync.{any,all}.pred (PTX ISA, "Parallel Synchronization and Communication Instructions: vote"):
// over the lanes of the warp whose bit is set in the member mask, which must all execute it; on a wave of
// 64 (AMD) over the whole wave, the mask ignored.
void Executor::Vote(const CallNode* c, const Lanes& act, Slot* out) {
  if (c->args.size() != 3) Bad(c, "expects (lane mask, predicate, width 32|64)");
  const int width = static_cast<int>(ConstArg(c, 2));
  if (width != 32 && width != 64) Bad(c, "width must be 32 or 64");
  const bool any = c->op == "tl.any_sync";
  TmpScope ts(this);
  Slot* mask = Tmp();
  Slot* p = Tmp();
  Eval(c->args[0], act, mask);
  Eval(c->args[1], act, p);
  for (int t : act) out[t].i = 0;
  const char* name = any ? "T.any_sync" : "T.all_sync";
  Lanes full = width == 64 ? FullWaves64(act, name) : FullWarps(act, name, true);
  std::map<int, bool> result;  // warp -> vote
  for (int t : full) {
    const uint32_t m = static_cast<uint32_t>(mask[t].i);
    if (width == 32 && !((m >> (t & 31)) & 1)) continue;
    auto it = result.emplace(t / width, !any).first;
    it->second = any ? (it->second || p[t].i != 0) : (it->second && p[t].i != 0);
  }
  for (int t : full) {
    auto it = result.find(t / width);
    out[t].i = it == result.end() ? 0 : it->second;
  }
}

// shfl.sync.idx (PTX ISA): lane l reads the value of lane `lane` of its group of `width` lanes; every lane
// of the warp (wave) executes it.
void Executor::ShflSync(const CallNode* c, const Lanes& act, Slot* out) {
  if (c->args.size() != 5) Bad(c, "expects (mask, value, lane, width, warp size 32|64)");
  const int wave = static_cast<int>(ConstArg(c, 4)), width = static_cast<int>(ConstArg(c, 3));
  if ((wave != 32 && wave != 64) || width <= 0 || width > wave || (width & (width - 1)))
    Bad(c, "width must be a power of two up to the warp size (32 or 64)");
  TmpScope ts(this);
  Slot* v = Tmp();
  Slot* lane = Tmp();
  Eval(c->args[1], act, v);
  Eval(c->args[2], act, lane);
  for (int t : act) out[t].i = 0;
  Lanes full =
      wave == 64 ? FullWaves64(act, "T.tvm_warp_shuffle") : FullWarps(act, "T.tvm_warp_shuffle", true);
  for (int t : full) {
    const int src = (t & ~(width - 1)) | (static_cast<int>(AsInt(lane[t], c->args[2]->dtype)) & (width - 1));
    if (src >= T_) {  // a lane past the block's last thread: it does not exist, the value is undefined
      Report("inactive_lanes", t, [&] {
        return "T.tvm_warp_shuffle reads lane " + std::to_string(src & 31) + " of warp " + std::to_string(src >> 5) +
               ", which a block of " + std::to_string(T_) + " threads does not have (the value is undefined)";
      });
      continue;
    }
    out[t] = v[src];
  }
}

void Executor::ShflXor(const CallNode* c, const Lanes& act, Slot* out) {
  if (c->args.size() != 2 && c->args.size() != 3) Bad(c, "expects (value, lane_mask[, width 32|64])");
  const int width = c->args.size() == 3 ? static_cast<int>(ConstArg(c, 2)) : 32;
  if (width != 32 && width != 64) Bad(c, "width must be 32 or 64");
  TmpScope ts(this);
  Slot* v = Tmp();
  Slot* mask = Tmp();
  Eval(c->args[0], act, v);
  Eval(c->args[1], act, mask);
  DataType vt = c->args[0]->dtype;
  for (int t : act) out[t].i = 0;  // lanes of incomplete warps get 0
  Lanes full = width == 64 ? FullWaves64(act, "shfl_xor") : FullWarps(act, "shfl_xor", true);
  for (int t : full) {
    int src = (t & ~(width - 1)) | ((t ^ static_cast<int>(AsInt(mask[t], c->args[1]->dtype))) & (width - 1));
    if (src >= T_) {
      Report("inactive_lanes", t, [&] {
        return "shfl_xor reads lane " + std::to_string(src & 31) + ", which a block of " + std::to_string(T_) +
               " threads does not have (the value is undefined)";
      });
      continue;
    }
    out[t] = vt == c->dtype ? v[src] : Convert(v[src], vt, c->dtype);
  }
}

// T.atomic_load / T.atomic_store: the element read or written atomically (no race with other atomics).
// Lanes run one after another, which is a sequentially consistent order, so every memory order holds.
void Executor::AtomicLoadStore(const CallNode* c, const Lanes& act, Slot* out) {
  const bool load = c->op == "tl.atomic_load";
  if (c->args.size() != (load ? 2u : 3u))
    Bad(c, load ? "expects (element, order)" : "expects (element, value, order)");
  const BufferLoadNode* dl = Operand(c, 0);
  Mem& m = MemOf(dl->buffer.get());
  TmpScope ts(this);
  Slot* f = Tmp();
  Slot* v = Tmp();
  Locate(dl->buffer, dl->indices, act, f);
  if (!load) Eval(c->args[1], act, v);
  for (int t : act) {
    out[t].i = 0;
    if (f[t].i < 0) continue;
    if (load)
      out[t] = Read(m, t, f[t].i, true);
    else
      Write(m, t, f[t].i, Convert(v[t], c->args[1]->dtype, m.t), true);
  }
}

// red.global.add.v2 / .v4.f32 (PTX ISA, "red"): a vector reduction is one scalar atomic add per element, at
// consecutive addresses from the (vector-aligned) first one.
void Executor::AtomicAddVec(const CallNode* c, const Lanes& act) {
  const size_t V = c->args.size() - 1;
  if (V != 2 && V != 4) Bad(c, "expects (dst, 2 or 4 values)");
  const BufferLoadNode* dl = Operand(c, 0);
  Mem& m = MemOf(dl->buffer.get());
  if (m.t != DataType::Float(32)) Bad(c, "adds float32 elements");
  TmpScope ts(this);
  Slot* f = Tmp();
  Locate(dl->buffer, dl->indices, act, f, static_cast<int>(V));
  std::vector<Slot*> v;
  for (size_t i = 0; i < V; ++i) {
    v.push_back(Tmp());
    Eval(c->args[i + 1], act, v.back());
  }
  for (int t : act) {  // one thread after another: atomics serialise
    if (f[t].i < 0) continue;
    if (f[t].i % static_cast<int64_t>(V))
      Report("misaligned", t, [&] {
        return "a " + std::to_string(V * 4) + "-byte vector atomic add to '" + dl->buffer->name +
               "' at element " + std::to_string(f[t].i) + " is not aligned to its size";
      });
    for (size_t i = 0; i < V; ++i) {
      Slot cur = Read(m, t, f[t].i + static_cast<int64_t>(i), true), nv;
      nv.f = RoundFloat(cur.f + Convert(v[i][t], c->args[i + 1]->dtype, m.t).f, m.t);
      Write(m, t, f[t].i + static_cast<int64_t>(i), nv, true);
    }
  }
}

void Executor::AtomicAdd(const CallNode* c, const Lanes& act, Slot* old) {
  if (c->args.size() != 2) Bad(c, "expects (dst, value)");
  const BufferLoadNode* dl = Operand(c, 0);
  Mem& m = MemOf(dl->buffer.get());
  TmpScope ts(this);
  Slot* v = Tmp();
  Slot* f = Tmp();
  Eval(c->args[1], act, v);
  Locate(dl->buffer, dl->indices, act, f);
  DataType vt = c->args[1]->dtype;
  for (int t : act) {  // one thread after another: atomics serialise
    old[t].i = 0;
    if (f[t].i < 0) continue;
    Slot cur = Read(m, t, f[t].i, true);
    old[t] = cur;
    Slot add = Convert(v[t], vt, m.t), nv;
    if (c->op == "tl.atomic_max" || c->op == "tl.atomic_min") {
      // v replaces the element where it compares greater (less): a NaN never replaces, and stays
      const bool max = c->op == "tl.atomic_max";
      bool take;
      if (m.t.is_float())
        take = max ? add.f > cur.f : add.f < cur.f;
      else if (m.t.is_uint())
        take = max ? static_cast<uint64_t>(add.i) > static_cast<uint64_t>(cur.i)
                   : static_cast<uint64_t>(add.i) < static_cast<uint64_t>(cur.i);
      else
        take = max ? add.i > cur.i : add.i < cur.i;
      if (take)
        Write(m, t, f[t].i, add, true);
      else
        Write(m, t, f[t].i, cur, true);  // an atomic still writes its element (race bookkeeping)
      continue;
    }
    if (m.t.is_float())
      nv.f = RoundFloat(cur.f + add.f, m.t);
    else
      nv.i = WrapInt(static_cast<int64_t>(static_cast<uint64_t>(cur.i) + static_cast<uint64_t>(add.i)), m.t);
    Write(m, t, f[t].i, nv, true);
  }
}

}  // namespace tl::emu
