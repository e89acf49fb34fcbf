// T.copy: moves a tile between any two memory scopes; both sides have the same tile shape (unit
// dims aside), the dtype is converted on the way.
#include "arith/simplify.h"
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
                                       cluster_barrier, span, fp4_padded);
}
CopyNode TmaCopyNode::PlanCopy() const {
  if (!fp4_padded) return CopyNode(src, dst, false, span);
  // the source's slots: twice its last extent in bytes, one a value (what the TMA format 16U4_ALIGN16B tiles)
  const Buffer& g = src.buffer;
  std::vector<Expr> shape = g->shape;
  shape.back() = Simplify(shape.back() * Int(2));
  Region v = src;
  v.buffer = MakeBuffer(g->name, g->dtype, shape, g->scope, g->span);
  v.ranges.back() = {Simplify(v.ranges.back().min * Int(2)), Simplify(v.ranges.back().extent * Int(2))};
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

namespace {
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
