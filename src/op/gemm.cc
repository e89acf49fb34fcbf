// T.gemm: C += op(A) @ op(B). Operands are tiles in shared memory or fragments; the accumulator is a
// fragment (or local buffer) of a dtype the inputs can accumulate into; K and (M, N) must agree.
#include <algorithm>
#include <map>

#include "ir/printer.h"
#include "op/tile_op_checks.h"

namespace tl {
namespace {

using namespace op_detail;

// The 2-d shape of an operand tile: its extents without unit dims (the last two when fewer than
// two are not 1, e.g. a (1, K) row).
std::vector<Expr> Matrix(const Region& r, const char* nm, const Span& sp) {
  auto shape = NonUnit(r.ranges);
  auto ext = Extents(r.ranges);
  if (shape.size() < 2 && ext.size() >= 2) shape = {ext[ext.size() - 2], ext.back()};
  if (shape.size() != 2)
    throw UserError(ErrorKind::kType,
                    std::string("T.gemm operand ") + nm + " '" + r.buffer->name +
                        "' must be a 2-d tile, got " + ShapeStr(ext),
                    sp);
  return shape;
}

}  // namespace

void GemmNode::Check() const {
  const GemmNode& g = *this;
  const Buffer &a = g.A.buffer, &b = g.B.buffer, &c = g.C.buffer;
  const Span& sp = g.span;
  auto bad = [&](const std::string& m) { throw UserError(ErrorKind::kType, m, sp); };
  if (g.wg_wait < -1)
    bad("T.gemm wg_wait must be -1 (no wait: T.wait_wgmma later) or the number of wgmma groups left pending");
  for (auto [buf, nm] : {std::pair<const Buffer*, const char*>{&a, "A"}, {&b, "B"}}) {
    if ((*buf)->scope == Scope::kGlobal)
      bad(std::string("T.gemm operand ") + nm + " '" + (*buf)->name +
          "' is in global memory; copy it to shared memory or a fragment first");
    if ((*buf)->scope == Scope::kLocalVar)
      bad(std::string("T.gemm operand ") + nm + " '" + (*buf)->name +
          "' must be a tile in shared memory or a fragment, not a T.alloc_var scalar");
  }
  if (c->scope != Scope::kFragment && c->scope != Scope::kLocal) {
    static const std::map<Scope, std::string> where{{Scope::kGlobal, "in global memory"},
                                                    {Scope::kShared, "in shared memory"},
                                                    {Scope::kLocalVar, "a T.alloc_var scalar"}};
    auto w = where.find(c->scope);
    bad("T.gemm accumulator C '" + c->name + "' must be a fragment (T.alloc_fragment) or local buffer" +
        (w != where.end() ? ", not " + w->second
                          : c->scope == Scope::kTensorMemory ? " here (a tensor-memory C is the tcgen05 gemm's)"
                                                             : ""));
  }
  // fp8 A and B may mix e4m3 and e5m2 (mma.sync / wgmma take the two types independently); fp4 (e2m1) only in
  // T.mma_gemm_blockscaled (MXFP4), where it mixes with fp8 too.
  const bool blockscaled = std::string(op) == "gemm_blockscaled";
  auto is_fp4 = [](DataType t) { return t.is_mx_float(); };  // fp4 or fp6
  if (!blockscaled && (is_fp4(a->dtype) || is_fp4(b->dtype)))
    bad("T.gemm does not take " + (is_fp4(a->dtype) ? a->dtype : b->dtype).str() + " operands ('" + a->name +
        "', '" + b->name +
        "'): use T.mma_gemm_blockscaled (MXFP4 / MXFP6, with E8M0 scales; gfx950 and the CPU), or dequantise "
        "the "
        "tile into a float16 / bfloat16 tile first (T.Parallel with T.cast)");
  auto fp8 = [&](DataType t) {
    return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2 ||
           (blockscaled && is_fp4(t));
  };
  if (a->dtype != b->dtype && !(fp8(a->dtype) && fp8(b->dtype)))
    bad("T.gemm operands A '" + a->name + "' (" + a->dtype.str() + ") and B '" + b->name + "' (" +
        b->dtype.str() +
        ") must have the same dtype (or be float8_e4m3fn / float8_e5m2 in any mix); for a mixed-input gemm "
        "convert the narrower operand into a tile of the other's dtype first (T.Parallel with T.Cast)");
  // Accumulator dtypes each input dtype may accumulate into.
  static const std::vector<std::pair<std::string, std::vector<std::string>>> accum{
      {"float16", {"float32", "float16"}},
      {"bfloat16", {"float32", "float16"}},
      {"float32", {"float32"}},
      {"float8_e4m3fn", {"float32"}},
      {"float8_e5m2", {"float32"}},
      {"float4_e2m1fn", {"float32"}},
      {"float6_e2m3fn", {"float32"}},
      {"float6_e3m2fn", {"float32"}},
      {"float64", {"float64"}},
      {"int8", {"int32"}},
      {"uint8", {"int32"}}};
  const std::vector<std::string>* ok = nullptr;
  std::string all;
  for (auto& [in, outs] : accum) {
    all += (all.empty() ? "" : ", ") + in;
    if (in == a->dtype.str()) ok = &outs;
  }
  if (!ok)
    bad("T.gemm does not support " + a->dtype.str() + " inputs ('" + a->name + "', '" + b->name +
        "'); use one of " + all);
  if (std::find(ok->begin(), ok->end(), c->dtype.str()) == ok->end()) {
    std::string opts;
    for (auto& o : *ok) opts += (opts.empty() ? "" : " or ") + o;
    bad("T.gemm accumulator C '" + c->name + "' is " + c->dtype.str() + " but " + a->dtype.str() +
        " inputs need " + opts);
  }
  auto am = Matrix(g.A, "A", sp), bm = Matrix(g.B, "B", sp), cm = Matrix(g.C, "C", sp);
  Expr M = g.trans_A ? am[1] : am[0], Ka = g.trans_A ? am[0] : am[1];
  Expr Kb = g.trans_B ? bm[1] : bm[0], N = g.trans_B ? bm[0] : bm[1];
  if (DimsDiffer(Ka, Kb))
    bad("T.gemm reduction dimensions differ: A '" + a->name + "' " + ShapeStr(am) +
        (g.trans_A ? " with transpose_A=True" : "") + " has K = " + PrintExpr(Ka) + " but B '" + b->name +
        "' " + ShapeStr(bm) + (g.trans_B ? " with transpose_B=True" : "") + " has K = " + PrintExpr(Kb));
  if (DimsDiffer(cm[0], M) || DimsDiffer(cm[1], N))
    bad("T.gemm accumulator C '" + c->name + "' is " + ShapeStr(cm) +
        " but A x B is (M, N) = " + ShapeStr({M, N}));
}

std::vector<std::pair<const Region*, Access>> GemmNode::Regions() const {
  return {{&A, Access::kRead}, {&B, Access::kRead}, {&C, clear_accum ? Access::kWrite : Access::kReadWrite}};
}
Stmt GemmNode::WithOperands(std::vector<Region> r, std::vector<Expr>) const {
  return std::make_shared<GemmNode>(std::move(r.at(0)), std::move(r.at(1)), std::move(r.at(2)), trans_A,
                                    trans_B, policy, clear_accum, k_pack, span, wg_wait, require_wgmma);
}
std::vector<int64_t> GemmNode::Attrs() const {
  return {trans_A, trans_B, static_cast<int64_t>(policy), clear_accum, k_pack, wg_wait, require_wgmma};
}
TileOpCall GemmNode::Call() const {
  TileOpCall c{require_wgmma ? "wgmma_gemm" : "gemm",
               {{TileOpArg::kRegion, &A, nullptr},
                {TileOpArg::kRegion, &B, nullptr},
                {TileOpArg::kRegion, &C, nullptr}},
               {}};
  if (trans_A) c.keywords.emplace_back("transpose_A", "True");
  if (trans_B) c.keywords.emplace_back("transpose_B", "True");
  if (policy == GemmWarpPolicy::kFullRow) c.keywords.emplace_back("policy", "T.GemmWarpPolicy.FullRow");
  if (policy == GemmWarpPolicy::kFullCol) c.keywords.emplace_back("policy", "T.GemmWarpPolicy.FullCol");
  if (clear_accum) c.keywords.emplace_back("clear_accum", "True");
  if (k_pack != 1) c.keywords.emplace_back("k_pack", std::to_string(k_pack));
  if (wg_wait != 0) c.keywords.emplace_back("wg_wait", std::to_string(wg_wait));
  return c;
}

namespace {
// T.gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack)
const TileOpRegistrar kRegisterGemm(
    "gemm",
    [](std::vector<Region> r, std::vector<Expr>, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      return std::make_shared<GemmNode>(
          r.at(0), r.at(1), r.at(2), AttrOr(a, "transpose_A", 0) != 0, AttrOr(a, "transpose_B", 0) != 0,
          static_cast<GemmWarpPolicy>(AttrOr(a, "policy", 0)), AttrOr(a, "clear_accum", 0) != 0,
          static_cast<int>(AttrOr(a, "k_pack", 1)), std::move(s), static_cast<int>(AttrOr(a, "wg_wait", 0)),
          AttrOr(a, "require_wgmma", 0) != 0);
    });
}  // namespace

}  // namespace tl
