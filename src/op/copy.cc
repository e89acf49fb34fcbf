// T.copy: moves a tile between any two memory scopes; both sides have the same tile shape (unit
// dims aside), the dtype is converted on the way.
#include "arith/simplify.h"
#include "ir/printer.h"
#include "op/tile_op_checks.h"

namespace tl {

void CopyNode::Check() const {
  const CopyNode& c = *this;
  using namespace op_detail;
  if (!SameTileShape(c.src.ranges, c.dst.ranges))
    throw UserError(ErrorKind::kType,
                    "mismatched slice shapes in T.copy: the source '" + c.src.buffer->name + "' tile is " +
                        ShapeStr(Extents(c.src.ranges)) + " but the destination '" + c.dst.buffer->name +
                        "' tile is " + ShapeStr(Extents(c.dst.ranges)),
                    c.span);
}

std::vector<std::pair<const Region*, Access>> CopyNode::Regions() const {
  return {{&src, Access::kRead}, {&dst, Access::kWrite}};
}
Stmt CopyNode::WithOperands(std::vector<Region> r, std::vector<Expr>) const {
  return std::make_shared<CopyNode>(std::move(r.at(0)), std::move(r.at(1)), disable_tma, span);
}
std::vector<int64_t> CopyNode::Attrs() const { return {disable_tma}; }
TileOpCall CopyNode::Call() const {
  TileOpCall c{"copy", {{TileOpArg::kRegion, &src, nullptr}, {TileOpArg::kRegion, &dst, nullptr}}, {}};
  if (disable_tma) c.keywords.emplace_back("disable_tma", "True");
  return c;
}

void TmaCopyNode::Check() const {
  PlanCopy().Check();
  auto* b = As<BufferLoadNode>(barrier);
  if (!b || b->buffer->scope != Scope::kShared || b->buffer->dtype != DataType::UInt(64))
    throw UserError(ErrorKind::kType, "T.tma_copy takes a barrier from T.alloc_barrier (e.g. bars[0])", span);
  if (src.buffer->scope != Scope::kGlobal || dst.buffer->scope != Scope::kShared)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.tma_copy copies global -> shared here; TMA stores (shared -> global) are not implemented", span);
}
std::vector<std::pair<const Region*, Access>> TmaCopyNode::Regions() const {
  return {{&src, Access::kRead}, {&dst, Access::kWrite}};
}
Stmt TmaCopyNode::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  return std::make_shared<TmaCopyNode>(std::move(r.at(0)), std::move(r.at(1)), std::move(e.at(0)),
                                       cluster_barrier, span, format);
}
CopyNode TmaCopyNode::PlanCopy() const {
  if (!format) return CopyNode(src, dst, false, span);
  // the source's slots, one a value (what the TMA formats 16U4_ALIGN16B / 16U6_ALIGN16B tile): twice its last
  // extent in bytes (fp4), or 4 / 3 of it (fp6)
  const Buffer& g = src.buffer;
  std::vector<Expr> shape = g->shape;
  auto values = [&](const Expr& bytes) {
    return Simplify(format == 1 ? bytes * Int(2) : Binary(BinaryOp::kFloorDiv, bytes * Int(4), Int(3)));
  };
  shape.back() = values(shape.back());
  Region v = src;
  v.buffer = MakeBuffer(g->name, g->dtype, shape, g->scope, g->span);
  v.ranges.back() = {values(v.ranges.back().min), values(v.ranges.back().extent)};
  return CopyNode(v, dst, false, span);
}
TileOpCall TmaCopyNode::Call() const {
  TileOpCall c{"tma_copy",
               {{TileOpArg::kRegion, &src, nullptr},
                {TileOpArg::kRegion, &dst, nullptr},
                {TileOpArg::kExpr, nullptr, barrier}},
               {}};
  return c;  // (cluster_barrier follows from the barrier, a T.alloc_cluster_barrier buffer)
}

std::vector<Expr> Tma4Node::Exprs() const {
  std::vector<Expr> e{col};
  e.insert(e.end(), rows.begin(), rows.end());
  if (barrier) e.push_back(barrier);
  return e;
}
Stmt Tma4Node::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  std::vector<Expr> rw(e.begin() + 1, e.begin() + 5);
  if (scatter)
    return std::make_shared<Tma4Node>(std::move(r.at(1)), std::move(r.at(0)), e.at(0), rw, nullptr, true,
                                      span);
  return std::make_shared<Tma4Node>(std::move(r.at(0)), std::move(r.at(1)), e.at(0), rw, e.at(5), false,
                                    span);
}
TileOpCall Tma4Node::Call() const {
  TileOpCall c{scatter ? "tma_scatter4" : "tma_gather4",
               {{TileOpArg::kRegion, scatter ? &tile : &global, nullptr},
                {TileOpArg::kRegion, scatter ? &global : &tile, nullptr},
                {TileOpArg::kExpr, nullptr, col}},
               {}};
  std::string r;
  for (auto& x : rows) r += (r.empty() ? "[" : ", ") + PrintExpr(x);
  c.keywords.emplace_back("rows", r + "]");
  if (barrier) c.keywords.emplace_back("barrier", PrintExpr(barrier));
  return c;
}
void Tma4Node::Check() const {
  const std::string what = scatter ? "T.tma_scatter4" : "T.tma_gather4";
  auto bad = [&](const std::string& m) { throw UserError(ErrorKind::kType, what + ": " + m, span); };
  if (global.buffer->scope != Scope::kGlobal || global.buffer->shape.size() != 2)
    bad("the global side '" + global.buffer->name + "' must be a 2-d tensor");
  int64_t r = 0, k = 0;
  if (tile.buffer->scope != Scope::kShared || tile.buffer->shape.size() != 2 ||
      !AsConstInt(tile.buffer->shape[0], &r) || !AsConstInt(tile.buffer->shape[1], &k) || r != 4)
    bad("the shared side '" + tile.buffer->name +
        "' must be a [4, K] shared tile (T.alloc_shared((4, K), ...))");
  if (global.buffer->dtype != tile.buffer->dtype)
    bad("the dtypes differ: " + global.buffer->dtype.str() + " and " + tile.buffer->dtype.str());
  const int bits = tile.buffer->dtype.bits();
  if (bits % 8 || k * bits / 8 % 16 || k > 256)
    bad("a row of the tile is " + std::to_string(k) + " " + tile.buffer->dtype.str() +
        " values; TMA moves rows of a multiple of 16 bytes and at most 256 values");
  if (rows.size() != 4) bad("takes exactly four row indices");
  for (const Expr& x : rows)
    if (!x->dtype.is_int() && !x->dtype.is_uint()) bad("the row indices must be integers");
  if (!col->dtype.is_int() && !col->dtype.is_uint()) bad("the column must be an integer");
  if (!scatter) {
    auto* b = As<BufferLoadNode>(barrier);
    if (!b || b->buffer->scope != Scope::kShared || b->buffer->dtype != DataType::UInt(64))
      bad("takes a barrier from T.alloc_barrier (barrier=bars[i])");
  }
}

namespace {
// T.tma_gather4(src, dst, col, r0, r1, r2, r3, barrier) / T.tma_scatter4(src, dst, col, r0, r1, r2, r3):
// regions (global, tile) for a gather, (tile, global) for a scatter
const TileOpRegistrar kRegisterTmaGather4("tma_gather4",
                                          [](std::vector<Region> r, std::vector<Expr> e,
                                             const std::map<std::string, int64_t>&, Span s) -> Stmt {
                                            return std::make_shared<Tma4Node>(
                                                r.at(0), r.at(1), e.at(0),
                                                std::vector<Expr>(e.begin() + 1, e.begin() + 5), e.at(5),
                                                false, std::move(s));
                                          });
const TileOpRegistrar kRegisterTmaScatter4("tma_scatter4",
                                           [](std::vector<Region> r, std::vector<Expr> e,
                                              const std::map<std::string, int64_t>&, Span s) -> Stmt {
                                             return std::make_shared<Tma4Node>(
                                                 r.at(1), r.at(0), e.at(0),
                                                 std::vector<Expr>(e.begin() + 1, e.begin() + 5), nullptr,
                                                 true, std::move(s));
                                           });
// T.tma_copy(src, dst, barrier)
const TileOpRegistrar kRegisterTmaCopy("tma_copy",
                                       [](std::vector<Region> r, std::vector<Expr> e,
                                          const std::map<std::string, int64_t>& a, Span s) -> Stmt {
                                         return std::make_shared<TmaCopyNode>(
                                             r.at(0), r.at(1), e.at(0),
                                             op_detail::AttrOr(a, "cluster_barrier", 0) != 0, std::move(s));
                                       });
// T.copy(src, dst, disable_tma=...)
const TileOpRegistrar kRegisterCopy("copy",
                                    [](std::vector<Region> r, std::vector<Expr>,
                                       const std::map<std::string, int64_t>& a, Span s) -> Stmt {
                                      return std::make_shared<CopyNode>(
                                          r.at(0), r.at(1), op_detail::AttrOr(a, "disable_tma", 0) != 0,
                                          std::move(s));
                                    });
}  // namespace

}  // namespace tl
