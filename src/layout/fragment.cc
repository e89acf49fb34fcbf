// Fragment layouts and swizzles; see fragment.h. The mma.sync accumulator placement follows the
// PTX ISA's figure for m16n8k16 (.f32 accumulators): lane = 4 * groupID + threadID_in_group,
// c0,c1 at row groupID, cols 2*threadID_in_group + {0,1}; c2,c3 eight rows below.
#include "layout/fragment.h"

#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/index_expr.h"
#include "layout/ir_value.h"

namespace tl {
namespace {
using namespace index_expr;
}  // namespace

std::string Dims(const std::vector<int64_t>& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

Fragment NewFragment(std::vector<int64_t> shape, int64_t threads, int64_t locals, int64_t reps,
                     std::string desc) {
  Fragment f;
  f.shape = std::move(shape);
  f.threads = threads;
  f.locals = locals;
  f.replicas = reps;
  f.desc = std::move(desc);
  f.tid = MakeVar("tid");
  f.loc = MakeVar("loc");
  f.rep = MakeVar("rep");
  for (size_t i = 0; i < f.shape.size(); ++i) f.idx.push_back(MakeVar("i" + std::to_string(i)));
  f.replica = Int(0);
  return f;
}

namespace {
using namespace ir_value;
constexpr const char* kWhat = "T.fragment";
}  // namespace

Expr FragmentToExpr(const Fragment& f) {
  std::vector<Expr> idx(f.idx.begin(), f.idx.end());
  auto I = [](int64_t v) { return IntImm(DataType::Int(64), v); };
  return Call(DataType::Handle(), "fragment",
              {StringImm(f.kind), StringImm(f.desc), StringImm(f.origin), List(Ints(f.shape)), I(f.threads),
               I(f.locals), I(f.replicas), List(Ints(f.params)), f.tid, f.loc, f.rep, List(idx),
               List(f.index), f.valid ? f.valid : Bool(true), f.thread, f.local, f.replica});
}

Fragment FragmentFromExpr(const Expr& e) {
  auto* c = As<CallNode>(e);
  TL_ICHECK(c && c->op == "fragment" && c->args.size() == 17, "malformed T.fragment value");
  const auto& a = c->args;
  Fragment f;
  f.kind = StrArg(a[0], kWhat);
  f.desc = StrArg(a[1], kWhat);
  f.origin = StrArg(a[2], kWhat);
  for (auto& x : ListArgs(a[3], kWhat)) f.shape.push_back(IntArg(x, kWhat));
  f.threads = IntArg(a[4], kWhat);
  f.locals = IntArg(a[5], kWhat);
  f.replicas = IntArg(a[6], kWhat);
  for (auto& x : ListArgs(a[7], kWhat)) f.params.push_back(IntArg(x, kWhat));
  f.tid = VarArg(a[8], kWhat);
  f.loc = VarArg(a[9], kWhat);
  f.rep = VarArg(a[10], kWhat);
  for (auto& x : ListArgs(a[11], kWhat)) f.idx.push_back(VarArg(x, kWhat));
  f.index = ListArgs(a[12], kWhat);
  if (!IsConstInt(a[13], 1) || !a[13]->dtype.is_bool()) f.valid = a[13];
  f.thread = a[14];
  f.local = a[15];
  f.replica = a[16];
  return f;
}

std::vector<Expr> Fragment::IndexAt(const Expr& t, const Expr& l) const {
  std::map<const VarNode*, Expr> m{{tid.get(), t}, {loc.get(), l}};
  std::vector<Expr> r;
  for (auto& e : index) r.push_back(Simplify(Substitute(e, m)));
  return r;
}
Expr Fragment::ValidAt(const Expr& t, const Expr& l) const {
  if (!valid) return nullptr;
  return Simplify(Substitute(valid, {{tid.get(), t}, {loc.get(), l}}));
}
Expr Fragment::ThreadOf(const std::vector<Expr>& i, const Expr& r) const {
  std::map<const VarNode*, Expr> m{{rep.get(), r}};
  for (size_t d = 0; d < idx.size(); ++d) m[idx[d].get()] = i[d];
  return Simplify(Substitute(thread, m));
}
Expr Fragment::LocalOf(const std::vector<Expr>& i) const {
  std::map<const VarNode*, Expr> m;
  for (size_t d = 0; d < idx.size(); ++d) m[idx[d].get()] = i[d];
  return Simplify(Substitute(local, m));
}
Expr Fragment::ReplicaOf(const Expr& t) const { return Simplify(Substitute(replica, {{tid.get(), t}})); }

std::vector<std::pair<int64_t, int64_t>> Fragment::Table() const {
  int64_t total = 1;
  for (auto s : shape) total *= s;
  std::vector<std::pair<int64_t, int64_t>> out(static_cast<size_t>(total), {-1, -1});
  std::map<const VarNode*, int64_t> env;
  for (int64_t t = 0; t < threads; ++t) {
    env[tid.get()] = t;
    int64_t r = 0;
    EvalInt(replica, env, &r);
    if (r != 0) continue;
    for (int64_t l = 0; l < locals; ++l) {
      env[loc.get()] = l;
      int64_t ok = 1;
      if (valid && (!EvalInt(valid, env, &ok) || !ok)) continue;
      int64_t flat = 0;
      for (size_t d = 0; d < index.size(); ++d) {
        int64_t v;
        if (!EvalInt(index[d], env, &v)) return {};
        flat = flat * shape[d] + v;
      }
      if (flat >= 0 && flat < total) out[static_cast<size_t>(flat)] = {t, l};
    }
  }
  return out;
}

bool Fragment::SameAs(const Fragment& o) const {
  if (shape != o.shape || threads != o.threads || locals != o.locals || replicas != o.replicas) return false;
  if (desc == o.desc) return true;
  std::map<const VarNode*, int64_t> e1, e2;
  for (int64_t t = 0; t < threads; ++t) {
    e1[tid.get()] = t;
    e2[o.tid.get()] = t;
    for (int64_t l = 0; l < locals; ++l) {
      e1[loc.get()] = l;
      e2[o.loc.get()] = l;
      int64_t v1 = 1, v2 = 1;
      if (valid) EvalInt(valid, e1, &v1);
      if (o.valid) EvalInt(o.valid, e2, &v2);
      if (v1 != v2) return false;
      if (!v1) continue;
      for (size_t d = 0; d < index.size(); ++d) {
        int64_t a, b;
        if (!EvalInt(index[d], e1, &a) || !EvalInt(o.index[d], e2, &b) || a != b) return false;
      }
    }
  }
  return true;
}

Fragment MmaAccumulator(int64_t M, int64_t N, int64_t wm, int64_t wn) {
  int64_t wM = M / wm, wN = N / wn, mt = wM / 16, nt = wN / 8;
  Fragment f =
      NewFragment({M, N}, 32 * wm * wn, mt * nt * 4, 1,
                  "mma_C(" + Dims({M, N}) + ", warps " + std::to_string(wm) + "x" + std::to_string(wn) + ")");
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  Expr tile = Div(f.loc, 4), r = Mod(f.loc, 4);
  f.index = {Mod(warp, wm) * C(wM) + Div(tile, nt) * C(16) + Div(lane, 4) + Div(r, 2) * C(8),
             Div(warp, wm) * C(wN) + Mod(tile, nt) * C(8) + Mod(lane, 4) * C(2) + Mod(r, 2)};
  Expr i = f.idx[0], j = f.idx[1];
  Expr ii = Mod(i, wM), jj = Mod(j, wN);
  f.kind = "mma_C";
  f.params = {M, N, wm, wn};
  f.thread = (Div(j, wN) * C(wm) + Div(i, wM)) * C(32) + Mod(Mod(ii, 16), 8) * C(4) + Div(Mod(jj, 8), 2);
  f.local = (Div(ii, 16) * C(nt) + Div(jj, 8)) * C(4) + Div(Mod(ii, 16), 8) * C(2) + Mod(jj, 2);
  return f;
}

Fragment MmaOperandA(int64_t M, int64_t K, int64_t wm, int64_t wn) {
  if (wn == 1) return MmaAccumulator(M, K, wm, 1);
  // Warp w holds the rows of warp row w % wm, as mma_C(M x K, warps wm x 1) places them; the wn warps of one
  // warp row hold the same registers (replica w / wm).
  int64_t wM = M / wm, mt = wM / 16, nt = K / 8;
  Fragment f = NewFragment({M, K}, 32 * wm * wn, mt * nt * 4, wn,
                           "mma_A(" + Dims({M, K}) + ", warps " + std::to_string(wm) + "x" + std::to_string(wn) +
                               ", " + std::to_string(wn) + " replicas)");
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  Expr tile = Div(f.loc, 4), r = Mod(f.loc, 4);
  f.index = {Mod(warp, wm) * C(wM) + Div(tile, nt) * C(16) + Div(lane, 4) + Div(r, 2) * C(8),
             Mod(tile, nt) * C(8) + Mod(lane, 4) * C(2) + Mod(r, 2)};
  Expr i = f.idx[0], j = f.idx[1];
  Expr ii = Mod(i, wM);
  f.kind = "mma_A";
  f.params = {M, K, wm, wn};
  f.thread = (Expr(f.rep) * C(wm) + Div(i, wM)) * C(32) + Mod(Mod(ii, 16), 8) * C(4) + Div(Mod(j, 8), 2);
  f.local = (Div(ii, 16) * C(nt) + Div(j, 8)) * C(4) + Div(Mod(ii, 16), 8) * C(2) + Mod(j, 2);
  f.replica = Div(warp, wm);
  return f;
}

Fragment MmaOperandB(int64_t K, int64_t N, int64_t wn, bool trans, int64_t wm) {
  if (wm > 1) {
    // Warp w holds the columns of warp column w / wm (the gemm's warp grid), as the one-row split places
    // them; the wm warps of one warp column hold the same registers (replica w % wm).
    Fragment b = MmaOperandB(K, N, wn, trans, 1);
    int64_t wN = N / wn, nt = wN / 8;
    std::vector<int64_t> shape = b.shape;
    Fragment f = NewFragment(shape, 32 * wm * wn, b.locals, wm,
                             std::string("mma_B(") + (trans ? "NxK " : "KxN ") + Dims(shape) + ", warps " +
                                 std::to_string(wm) + "x" + std::to_string(wn) + ", " + std::to_string(wm) +
                                 " replicas)");
    f.kind = "mma_B";
    f.params = {K, N, wm, wn, trans ? 1 : 0};
    Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
    Expr kk = Div(f.loc, nt * 4), j = Mod(Div(f.loc, 4), nt), r = Mod(f.loc, 4);
    Expr k = kk * C(16) + Div(r, 2) * C(8) + Mod(lane, 4) * C(2) + Mod(r, 2);
    Expr n = Div(warp, wm) * C(wN) + j * C(8) + Div(lane, 4);
    f.index = trans ? std::vector<Expr>{n, k} : std::vector<Expr>{k, n};
    Expr ki = trans ? f.idx[1] : f.idx[0], ni = trans ? f.idx[0] : f.idx[1];
    Expr nn = Mod(ni, wN);
    f.thread = (Div(ni, wN) * C(wm) + Expr(f.rep)) * C(32) + Mod(nn, 8) * C(4) + Div(Mod(ki, 8), 2);
    f.local = (Div(ki, 16) * C(nt) + Div(nn, 8)) * C(4) + Div(Mod(ki, 16), 8) * C(2) + Mod(ki, 2);
    f.replica = Mod(warp, wm);
    return f;
  }
  int64_t wN = N / wn, nt = wN / 8;
  std::vector<int64_t> shape = trans ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
  Fragment f = NewFragment(shape, 32 * wn, (K / 16) * nt * 4, 1,
                           std::string("mma_B(") + (trans ? "NxK " : "KxN ") + Dims(shape) + ", warps 1x" +
                               std::to_string(wn) + ")");
  f.kind = "mma_B";
  f.params = {K, N, 1, wn, trans ? 1 : 0};
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  Expr kk = Div(f.loc, nt * 4), j = Mod(Div(f.loc, 4), nt), r = Mod(f.loc, 4);
  Expr k = kk * C(16) + Div(r, 2) * C(8) + Mod(lane, 4) * C(2) + Mod(r, 2);
  Expr n = warp * C(wN) + j * C(8) + Div(lane, 4);
  f.index = trans ? std::vector<Expr>{n, k} : std::vector<Expr>{k, n};
  Expr ki = trans ? f.idx[1] : f.idx[0], ni = trans ? f.idx[0] : f.idx[1];
  Expr nn = Mod(ni, wN);
  f.thread = Div(ni, wN) * C(32) + Mod(nn, 8) * C(4) + Div(Mod(ki, 8), 2);
  f.local = (Div(ki, 16) * C(nt) + Div(nn, 8)) * C(4) + Div(Mod(ki, 16), 8) * C(2) + Mod(ki, 2);
  return f;
}

Fragment MmaOperandATf32(int64_t M, int64_t K, int64_t wm, int64_t wn) {
  int64_t wM = M / wm, mt = wM / 16, nt = K / 8;
  Fragment f = NewFragment({M, K}, 32 * wm * wn, mt * nt * 4, wn,
                           "mma_A_tf32(" + Dims({M, K}) + ", warps " + std::to_string(wm) + "x" +
                               std::to_string(wn) + (wn > 1 ? ", " + std::to_string(wn) + " replicas)" : ")"));
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  Expr tile = Div(f.loc, 4), e = Mod(f.loc, 4);
  f.index = {Mod(warp, wm) * C(wM) + Div(tile, nt) * C(16) + Div(lane, 4) + Mod(e, 2) * C(8),
             Mod(tile, nt) * C(8) + Mod(lane, 4) + Div(e, 2) * C(4)};
  Expr i = f.idx[0], j = f.idx[1];
  Expr ii = Mod(i, wM);
  f.kind = "mma_A_tf32";
  f.params = {M, K, wm, wn};
  f.thread = (Expr(f.rep) * C(wm) + Div(i, wM)) * C(32) + Mod(ii, 8) * C(4) + Mod(j, 4);
  f.local = (Div(ii, 16) * C(nt) + Div(j, 8)) * C(4) + Div(Mod(j, 8), 4) * C(2) + Div(Mod(ii, 16), 8);
  f.replica = Div(warp, wm);
  return f;
}

Fragment MmaOperandBTf32(int64_t K, int64_t N, int64_t wm, int64_t wn, bool trans) {
  int64_t wN = N / wn, nt = wN / 8;
  std::vector<int64_t> shape = trans ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
  Fragment f = NewFragment(shape, 32 * wm * wn, (K / 8) * nt * 2, wm,
                           std::string("mma_B_tf32(") + (trans ? "NxK " : "KxN ") + Dims(shape) + ", warps " +
                               std::to_string(wm) + "x" + std::to_string(wn) +
                               (wm > 1 ? ", " + std::to_string(wm) + " replicas)" : ")"));
  f.kind = "mma_B_tf32";
  f.params = {K, N, wm, wn, trans ? 1 : 0};
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  Expr kk = Div(f.loc, nt * 2), jt = Mod(Div(f.loc, 2), nt), e = Mod(f.loc, 2);
  Expr k = kk * C(8) + Mod(lane, 4) + e * C(4);
  Expr n = Div(warp, wm) * C(wN) + jt * C(8) + Div(lane, 4);
  f.index = trans ? std::vector<Expr>{n, k} : std::vector<Expr>{k, n};
  Expr ki = trans ? f.idx[1] : f.idx[0], ni = trans ? f.idx[0] : f.idx[1];
  Expr nn = Mod(ni, wN);
  f.thread = (Div(ni, wN) * C(wm) + Expr(f.rep)) * C(32) + Mod(nn, 8) * C(4) + Mod(ki, 4);
  f.local = (Div(ki, 8) * C(nt) + Div(nn, 8)) * C(2) + Div(Mod(ki, 8), 4);
  f.replica = Mod(warp, wm);
  return f;
}

Fragment ByteSplitFragment(const Fragment& f, size_t kdim) {
  std::vector<int64_t> shape = f.shape;
  shape.at(kdim) *= 2;
  std::string desc = f.desc;
  desc.insert(desc.find('('), "8");
  Fragment r = NewFragment(shape, f.threads, f.locals * 2, f.replicas, desc);
  r.kind = f.kind + "8";
  r.params = f.params;
  r.index = f.IndexAt(r.tid, Div(r.loc, 2));
  r.index[kdim] = Simplify(r.index[kdim] * C(2) + Mod(r.loc, 2));
  if (f.valid) r.valid = f.ValidAt(r.tid, Div(r.loc, 2));
  std::vector<Expr> half(r.idx.begin(), r.idx.end());
  half[kdim] = Div(r.idx[kdim], 2);
  r.thread = f.ThreadOf(half, r.rep);
  r.local = f.LocalOf(half) * C(2) + Mod(r.idx[kdim], 2);
  r.replica = f.replicas > 1 ? f.ReplicaOf(r.tid) : C(0);
  return r;
}

Fragment MmaRows(int64_t M, int64_t wm, int64_t wn) {
  int64_t wM = M / wm, mt = wM / 16;
  Fragment f = NewFragment(
      {M}, 32 * wm * wn, mt * 2, 4 * wn,
      "mma_rows(" + std::to_string(M) + ", warps " + std::to_string(wm) + "x" + std::to_string(wn) + ")");
  Expr warp = Div(f.tid, 32), lane = Mod(f.tid, 32);
  f.kind = "mma_rows";
  f.params = {M, 0, wm, wn};
  f.index = {Mod(warp, wm) * C(wM) + Div(f.loc, 2) * C(16) + Div(lane, 4) + Mod(f.loc, 2) * C(8)};
  Expr i = f.idx[0], ii = Mod(i, wM);
  f.thread = (Div(f.rep, 4) * C(wm) + Div(i, wM)) * C(32) + Mod(Mod(ii, 16), 8) * C(4) + Mod(f.rep, 4);
  f.local = Div(ii, 16) * C(2) + Div(Mod(ii, 16), 8);
  f.replica = Mod(lane, 4) + Div(warp, wm) * C(4);
  return f;
}

Fragment Striped(const std::vector<int64_t>& shape, int64_t threads, int64_t vec, int64_t owners) {
  if (owners <= 0 || owners > threads || threads % owners != 0) owners = threads;
  const int64_t reps = threads / owners;
  int64_t total = 1;
  for (auto s : shape) total *= s;
  int64_t per = owners * vec;
  int64_t chunks = (total + per - 1) / per;
  Fragment f = NewFragment(shape, threads, chunks * vec, reps,
                           "striped(" + Dims(shape) + ", " + std::to_string(threads) + " threads, vec " +
                               std::to_string(vec) +
                               (reps > 1 ? ", " + std::to_string(owners) + " owners x " + std::to_string(reps)
                                         : std::string()) +
                               ")");
  f.kind = "striped";
  f.params = {vec};
  if (reps > 1) f.params.push_back(owners);
  Expr owner = reps > 1 ? Mod(f.tid, owners) : Expr(f.tid);
  Expr e = (Div(f.loc, vec) * C(owners) + owner) * C(vec) + Mod(f.loc, vec);
  if (total % per != 0) f.valid = Binary(BinaryOp::kLT, e, C(total));
  f.index.resize(shape.size());
  Expr rest = e;
  for (size_t d = shape.size(); d-- > 0;) {
    f.index[d] = d == 0 ? rest : Mod(rest, shape[d]);
    rest = Div(rest, shape[d]);
  }
  Expr flat = C(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * C(shape[d]) + f.idx[d];
  f.thread = Mod(Div(flat, vec), owners);
  if (reps > 1) {
    f.thread = f.thread + Expr(f.rep) * C(owners);
    f.replica = Simplify(Div(f.tid, owners));
  }
  f.local = Div(flat, per) * C(vec) + Mod(flat, vec);
  for (auto& x : f.index) x = Simplify(x);
  f.thread = Simplify(f.thread);
  f.local = Simplify(f.local);
  return f;
}

Fragment ReorderFragment(const Fragment& f, const std::vector<int>& src_of) {
  Fragment r = f;  // the same placeholder vars: thread and local stay expressions of the same idx vars
  bool identity = true;
  for (size_t d = 0; d < src_of.size(); ++d) {
    size_t s = static_cast<size_t>(src_of[d]);
    r.shape[d] = f.shape[s];
    r.index[d] = f.index[s];
    r.idx[d] = f.idx[s];
    identity &= s == d;
  }
  if (identity) return f;
  std::string order;
  for (int s : src_of) order += (order.empty() ? "" : ",") + std::to_string(s);
  r.desc = "reordered(" + order + " of " + f.desc + ")";
  r.kind = "reordered";
  r.params.clear();
  return r;
}

Fragment Replicated(const std::vector<int64_t>& shape, int64_t threads) {
  int64_t total = 1;
  for (auto s : shape) total *= s;
  Fragment f = NewFragment(shape, threads, total, threads, "replicated(" + Dims(shape) + ")");
  f.kind = "replicated";
  f.index.resize(shape.size());
  Expr rest = f.loc;
  for (size_t d = shape.size(); d-- > 0;) {
    f.index[d] = d == 0 ? rest : Mod(rest, shape[d]);
    rest = Div(rest, shape[d]);
  }
  Expr flat = C(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * C(shape[d]) + f.idx[d];
  f.thread = f.rep;
  f.local = Simplify(flat);
  f.replica = f.tid;
  return f;
}

std::pair<int64_t, int64_t> GemmWarpGrid(int64_t M, int64_t N, int64_t warps, int policy) {
  auto fits = [&](int64_t wm, int64_t wn) { return M % (16 * wm) == 0 && N % (8 * wn) == 0; };
  std::pair<int64_t, int64_t> best{0, 0};
  if (policy == 1) {
    // As many warps along M as the rows allow, the rest along N (a 16-row tile on 4 warps: 1x4).
    for (int64_t wm = warps; wm >= 1; --wm)
      if (warps % wm == 0 && fits(wm, warps / wm)) return {wm, warps / wm};
  } else if (policy == 2) {
    for (int64_t wn = warps; wn >= 1; --wn)
      if (warps % wn == 0 && fits(warps / wn, wn)) return {warps / wn, wn};
  } else {
    // Square: the split whose per-warp tile is closest to square (ties: more warps along M).
    double best_score = 1e30;
    for (int64_t wm = 1; wm <= warps; ++wm) {
      if (warps % wm) continue;
      int64_t wn = warps / wm;
      if (!fits(wm, wn)) continue;
      double a = static_cast<double>(M) / wm, b = static_cast<double>(N) / wn;
      double score = a > b ? a / b : b / a;
      if (score < best_score - 1e-9) best_score = score, best = {wm, wn};
    }
    if (best.first) return best;
  }
  static const char* names[] = {"Square", "FullRow", "FullCol"};
  throw UserError(
      ErrorKind::kLayout,
      "T.gemm: a " + std::to_string(M) + "x" + std::to_string(N) + " accumulator cannot be split over " +
          std::to_string(warps) + " warps with policy " + names[policy] +
          " (each warp needs a multiple of 16 rows and 8 columns); change the tile or the thread count");
}

int64_t SwizzledOffsetInt(int64_t row, int64_t col, int64_t cols, int elem_bytes) {
  int64_t epc = 16 / elem_bytes;
  if (epc < 1 || cols % epc != 0) return row * cols + col;
  int64_t cpr = cols / epc, chunk = col / epc, phys = chunk;
  if (cpr >= 8 && cpr % 8 == 0)
    phys = (chunk / 8) * 8 + ((chunk % 8) ^ (row % 8));
  else if (cpr == 4)
    phys = chunk ^ ((row / 2) % 4);
  else if (cpr == 2)
    phys = chunk ^ ((row / 4) % 2);
  return row * cols + phys * epc + col % epc;
}

Expr SwizzledOffset(const Expr& row, const Expr& col, int64_t cols, int elem_bytes) {
  int64_t epc = 16 / elem_bytes;
  if (epc < 1 || cols % epc != 0) return Simplify(row * C(cols) + col);
  int64_t cpr = cols / epc;
  Expr chunk = Div(col, epc);
  auto x = [](const Expr& a, const Expr& b) {
    int64_t p, q;
    if (AsConstInt(a, &p) && AsConstInt(b, &q)) return C(p ^ q);
    return Call(DataType::Int(32), "tl.bitwise_xor", {a, b});
  };
  Expr phys;
  if (cpr >= 8 && cpr % 8 == 0)
    phys = Div(chunk, 8) * C(8) + x(Simplify(Mod(chunk, 8)), Simplify(Mod(row, 8)));
  else if (cpr == 4)
    phys = x(Simplify(chunk), Simplify(Mod(Div(row, 2), 4)));
  else if (cpr == 2)
    phys = x(Simplify(chunk), Simplify(Mod(Div(row, 4), 2)));
  else
    phys = chunk;
  return Simplify(row * C(cols) + phys * C(epc) + Mod(col, epc));
}

}  // namespace tl
