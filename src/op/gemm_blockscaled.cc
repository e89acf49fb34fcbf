// T.mma_gemm_blockscaled; see gemm_blockscaled.h.
#include "op/gemm_blockscaled.h"

#include "arith/simplify.h"
#include "ir/printer.h"
#include "op/tile_op_checks.h"

namespace tl {

using namespace op_detail;

namespace {
// The K extent of an operand tile, in values (ValuesPerElement: twice the bytes of a packed fp4 tile).
Expr TileK(const Region& r, bool k_first, int64_t values_per_element) {
  auto ext = NonUnit(r.ranges);
  if (ext.size() < 2) ext = Extents(r.ranges);
  Expr k = k_first ? ext[ext.size() - 2] : ext.back();
  return values_per_element == 1 ? k : Simplify(Binary(BinaryOp::kMul, k, Int(values_per_element)));
}
}  // namespace

Expr GemmBlockScaledNode::ScaleColumn(bool is_b, const Expr& k) const {
  const Region& sf = is_b ? SFB : SFA;
  const int g = is_b ? gran_b : gran_a;
  Expr K = TileK(is_b ? B : A, is_b ? !trans_B : trans_A, ValuesPerElement(is_b));
  int64_t kt = 0, cols = 0;
  const bool local =
      AsConstInt(Simplify(K), &kt) && AsConstInt(Simplify(sf.ranges.back().extent), &cols) && cols * g == kt;
  Expr col = local ? Binary(BinaryOp::kFloorDiv, k, Int(g))
                   : Binary(BinaryOp::kFloorDiv, Binary(BinaryOp::kAdd, k_start, k), Int(g));
  return Simplify(Binary(BinaryOp::kAdd, sf.ranges.back().min, col));
}

std::pair<std::vector<Expr>, Expr> GemmBlockScaledNode::ScaleAt(bool is_b, const Expr& row,
                                                                const Expr& k) const {
  const Region& sf = is_b ? SFB : SFA;
  std::vector<Expr> idx;
  for (auto& rg : sf.ranges) idx.push_back(rg.min);
  const size_t r = idx.size() - 2, c = idx.size() - 1;
  if (!Nvf4Words()) {  // E8M0 bytes
    idx[r] = Simplify(Binary(BinaryOp::kAdd, idx[r], row));
    idx[c] = ScaleColumn(is_b, k);
    return {idx, Int(0)};
  }
  // words of 4 groups; tile-local when the tile's words cover its K, else counted from k_start
  const int g = is_b ? gran_b : gran_a;
  Expr K = TileK(is_b ? B : A, is_b ? !trans_B : trans_A, ValuesPerElement(is_b));
  int64_t kt = 0, cols = 0, rows = 0;
  AsConstInt(Simplify(K), &kt);
  AsConstInt(Simplify(sf.ranges[c].extent), &cols);
  AsConstInt(Simplify(sf.ranges[r].extent), &rows);
  const Expr kk = cols * 4 * g == kt ? k : Binary(BinaryOp::kAdd, k_start, k);
  Expr word = Binary(BinaryOp::kFloorDiv, kk, Int(4 * g));
  Expr shift = Simplify(Binary(
      BinaryOp::kMul, Binary(BinaryOp::kFloorMod, Binary(BinaryOp::kFloorDiv, kk, Int(g)), Int(4)), Int(8)));
  if (!chunk_kmajor) {  // row-major words
    idx[r] = Simplify(Binary(BinaryOp::kAdd, idx[r], row));
    idx[c] = Simplify(Binary(BinaryOp::kAdd, idx[c], word));
    return {idx, shift};
  }
  Expr flat =
      Binary(BinaryOp::kAdd,
             Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, word, Int(rows)),
                    Binary(BinaryOp::kMul, Binary(BinaryOp::kFloorMod, row, Int(32)), Int(rows / 32))),
             Binary(BinaryOp::kFloorDiv, row, Int(32)));
  idx[r] = Simplify(Binary(BinaryOp::kAdd, idx[r], Binary(BinaryOp::kFloorDiv, flat, Int(cols))));
  idx[c] = Simplify(Binary(BinaryOp::kAdd, idx[c], Binary(BinaryOp::kFloorMod, flat, Int(cols))));
  return {idx, shift};
}

std::vector<std::pair<const Region*, Access>> GemmBlockScaledNode::Regions() const {
  return {{&A, Access::kRead},
          {&B, Access::kRead},
          {&C, clear_accum ? Access::kWrite : Access::kReadWrite},
          {&SFA, Access::kRead},
          {&SFB, Access::kRead}};
}

Stmt GemmBlockScaledNode::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  return std::make_shared<GemmBlockScaledNode>(
      std::move(r.at(0)), std::move(r.at(1)), std::move(r.at(2)), std::move(r.at(3)), std::move(r.at(4)),
      trans_A, trans_B, policy, clear_accum, gran_a, gran_b, e.at(0), span, chunk_kmajor);
}

std::vector<int64_t> GemmBlockScaledNode::Attrs() const {
  return {trans_A, trans_B, static_cast<int64_t>(policy), clear_accum, gran_a, gran_b, chunk_kmajor};
}

TileOpCall GemmBlockScaledNode::Call() const {
  TileOpCall c{"mma_gemm_blockscaled",
               {{TileOpArg::kRegion, &A, nullptr},
                {TileOpArg::kRegion, &B, nullptr},
                {TileOpArg::kRegion, &C, nullptr},
                {TileOpArg::kRegion, &SFA, nullptr},
                {TileOpArg::kRegion, &SFB, nullptr}},
               {}};
  if (trans_A) c.keywords.emplace_back("transpose_A", "True");
  if (trans_B) c.keywords.emplace_back("transpose_B", "True");
  if (policy == GemmWarpPolicy::kFullRow) c.keywords.emplace_back("policy", "T.GemmWarpPolicy.FullRow");
  if (policy == GemmWarpPolicy::kFullCol) c.keywords.emplace_back("policy", "T.GemmWarpPolicy.FullCol");
  if (clear_accum) c.keywords.emplace_back("clear_accum", "True");
  c.keywords.emplace_back("k_start", PrintExpr(k_start));
  c.keywords.emplace_back("sf_a_granularity_k", std::to_string(gran_a));
  c.keywords.emplace_back("sf_b_granularity_k", std::to_string(gran_b));
  if (chunk_kmajor) c.keywords.emplace_back("sf_layout", "'blockscaled_chunk_kmajor'");
  return c;
}

Expr GemmBlockScaledNode::ScaleBits(Expr load) {
  if (load->dtype.code() != DataType::Code::kFloat8E8M0) return load;
  return ::tl::Call(DataType::UInt(8), "tl.reinterpret", {std::move(load)});
}

void GemmBlockScaledNode::Check() const {
  auto bad = [&](const std::string& m) {
    throw UserError(ErrorKind::kType, "T.mma_gemm_blockscaled: " + m, span);
  };
  auto mx = [](DataType t) {
    return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2 ||
           t.is_mx_float();
  };
  const DataType at = A.buffer->dtype, bt = B.buffer->dtype, ct = C.buffer->dtype;
  if (PackedA() || PackedB()) {  // uint8 [M, K / 2] / [N, K / 2] (transpose_B) tiles of e2m1 codes two a byte
    if (ct != DataType::Float(32)) bad("takes a float32 accumulator; got C " + ct.str());
    if ((PackedA() && trans_A) || (PackedB() && !trans_B))
      bad("packed fp4 (uint8) tiles are K-major: A [M, K / 2], B [N, K / 2] with transpose_B=True");
    if (!PackedA() && !mx(at))
      bad("A must be an MX float tile (or uint8 fp4 codes two a byte); got " + at.str());
    if (!PackedB() && !mx(bt))
      bad("B must be an MX float tile (or uint8 fp4 codes two a byte); got " + bt.str());
    auto am = NonUnit(A.ranges), bm = NonUnit(B.ranges), cm = NonUnit(C.ranges);
    if (am.size() != 2 || bm.size() != 2 || cm.size() != 2) bad("A, B and C must be 2-d tiles");
    // [rows, K] of each operand, K in values
    const Expr Ma = trans_A ? am[1] : am[0], Nb = trans_B ? bm[0] : bm[1];
    const Expr Ka = TileK(A, trans_A, ValuesPerElement(false)),
               Kb = TileK(B, !trans_B, ValuesPerElement(true));
    if (DimsDiffer(Ka, Kb))
      bad("A and B disagree on K: " + PrintExpr(Ka) + " and " + PrintExpr(Kb) + " values");
    if (DimsDiffer(cm[0], Ma) || DimsDiffer(cm[1], Nb))
      bad("C is [" + PrintExpr(cm[0]) + ", " + PrintExpr(cm[1]) + "] but A x B is [" + PrintExpr(Ma) + ", " +
          PrintExpr(Nb) + "]");
  } else if (!mx(at) || !mx(bt) || ct != DataType::Float(32))
    bad("takes float8_e4m3fn / float8_e5m2 / float6_e2m3fn / float6_e3m2fn / float4_e2m1fn A and B (MXFP8 / "
        "MXFP6 / MXFP4, any mix; or uint8 A and B holding e2m1 codes two a byte) with a float32 accumulator; "
        "got A " +
        at.str() + ", B " + bt.str() + ", C " + ct.str());
  if (!PackedA() && !PackedB()) GemmNode::Check();  // shapes, scopes
  if (k_start->dtype != DataType::Int(32) && k_start->dtype != DataType::Int(64))
    bad("k_start must be an integer (the tile's first K index)");
  const std::string nv = chunk_kmajor ? "sf_layout='blockscaled_chunk_kmajor'" : "uint32 scale words";
  if (Nvf4Words() && !PackedFp4() &&
      ((!PackedA() && at.code() != DataType::Code::kFloat4E2M1) ||
       (!PackedB() && bt.code() != DataType::Code::kFloat4E2M1)))
    bad(nv +
        " is NVFP4: float4_e2m1fn A and B (or uint8 tiles of their codes two a byte) with UE4M3 scales; got "
        "A " +
        at.str() + ", B " + bt.str() + " (MX formats take E8M0 scales as uint8)");
  for (auto [sf, g, nm, rows_of] :
       {std::tuple<const Region*, int, const char*, const char*>{&SFA, gran_a, "SFA", "A's rows (M)"},
        {&SFB, gran_b, "SFB", "B's columns (N)"}}) {
    const std::string gname = std::string("sf_") + (nm[2] == 'A' ? "a" : "b") + "_granularity_k";
    if (sf->buffer->scope != Scope::kShared && sf->buffer->scope != Scope::kGlobal)
      bad(std::string(nm) + " '" + sf->buffer->name + "' must be in shared or global memory");
    auto ext = Extents(sf->ranges);
    if (ext.size() != 2)
      bad(std::string(nm) + " must be a 2-d tile: rows = " + rows_of + ", columns = scale groups of K");
    if (Nvf4Words()) {
      if (g != 16)
        bad(gname + " must be 16 with " + nv + " (NVFP4: one UE4M3 scale per 16 elements); got " +
            std::to_string(g));
      if (sf->buffer->dtype != DataType::UInt(32))
        bad(std::string(nm) + " '" + sf->buffer->name +
            "' must hold the UE4M3 scales four a uint32 word with " + nv + "; got " +
            sf->buffer->dtype.str());
      if (!chunk_kmajor) continue;
      int64_t rows = 0, cols = 0;
      if (!AsConstInt(Simplify(ext[0]), &rows) || !AsConstInt(Simplify(ext[1]), &cols) || rows % 32 ||
          cols < 1)
        bad(std::string(nm) +
            " must be a constant [rows, words] tile whose rows are a multiple of 32 with "
            "sf_layout='blockscaled_chunk_kmajor'; got [" +
            PrintExpr(ext[0]) + ", " + PrintExpr(ext[1]) + "]");
      continue;
    }
    if (g <= 0 || g % 32)
      bad(gname + " must be a positive multiple of 32 (an MX scale covers 32 elements); got " +
          std::to_string(g));
    if (sf->buffer->dtype != DataType::UInt(8) && sf->buffer->dtype.code() != DataType::Code::kFloat8E8M0)
      bad(std::string(nm) + " '" + sf->buffer->name +
          "' must hold E8M0 scales (uint8 or float8_e8m0fnu); got " + sf->buffer->dtype.str() +
          " (uint32 words of UE4M3 scales, both SFA and SFB, are NVFP4)");
  }
  auto am = NonUnit(A.ranges), bm = NonUnit(B.ranges);
  Expr M = trans_A ? am[1] : am[0], N = trans_B ? bm[0] : bm[1];
  if (DimsDiffer(SFA.ranges[SFA.ranges.size() - 2].extent, M))
    bad("SFA has " + PrintExpr(SFA.ranges[SFA.ranges.size() - 2].extent) +
        " rows but A has M = " + PrintExpr(M));
  if (DimsDiffer(SFB.ranges[SFB.ranges.size() - 2].extent, N))
    bad("SFB has " + PrintExpr(SFB.ranges[SFB.ranges.size() - 2].extent) +
        " rows but B has N = " + PrintExpr(N));
}

namespace {
// T.mma_gemm_blockscaled(A, B, C, SFA, SFB) with exprs [k_start] and attrs transpose_A, transpose_B, policy,
// clear_accum, sf_a_granularity_k, sf_b_granularity_k
const TileOpRegistrar kRegisterGemmBlockScaled(
    "gemm_blockscaled",
    [](std::vector<Region> r, std::vector<Expr> e, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      return std::make_shared<GemmBlockScaledNode>(
          r.at(0), r.at(1), r.at(2), r.at(3), r.at(4), AttrOr(a, "transpose_A", 0) != 0,
          AttrOr(a, "transpose_B", 0) != 0, static_cast<GemmWarpPolicy>(AttrOr(a, "policy", 0)),
          AttrOr(a, "clear_accum", 0) != 0, static_cast<int>(AttrOr(a, "sf_a_granularity_k", 32)),
          static_cast<int>(AttrOr(a, "sf_b_granularity_k", 32)), e.at(0), std::move(s),
          AttrOr(a, "sf_layout", 0) != 0);
    });
}  // namespace

}  // namespace tl
