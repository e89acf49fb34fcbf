// T.atomic_add: dst += src tile (same tile shape), or dst[point] += value.
#include "op/tile_op_checks.h"

namespace tl {

void AtomicAddNode::Check() const {
  const AtomicAddNode& a = *this;
  using namespace op_detail;
  if (a.src && !SameTileShape(a.src->ranges, a.dst.ranges))
    throw UserError(ErrorKind::kType,
                    "T.atomic_add destination '" + a.dst.buffer->name + "' tile is " +
                        ShapeStr(Extents(a.dst.ranges)) + " but the source '" + a.src->buffer->name +
                        "' tile is " + ShapeStr(Extents(a.src->ranges)),
                    a.span);
}

std::vector<std::pair<const Region*, Access>> AtomicAddNode::Regions() const {
  std::vector<std::pair<const Region*, Access>> r{{&dst, Access::kReadWrite}};
  if (src) r.emplace_back(&*src, Access::kRead);
  return r;
}
std::vector<Expr> AtomicAddNode::Exprs() const {
  if (value) return {value};
  return {};
}
Stmt AtomicAddNode::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  std::optional<Region> s;
  if (r.size() > 1) s = std::move(r[1]);
  return std::make_shared<AtomicAddNode>(std::move(r.at(0)), std::move(s), e.empty() ? nullptr : e[0], span);
}
TileOpCall AtomicAddNode::Call() const {
  if (src)
    return {"atomic_add", {{TileOpArg::kRegion, &dst, nullptr}, {TileOpArg::kRegion, &*src, nullptr}}, {}};
  return {"atomic_add", {{TileOpArg::kPoint, &dst, nullptr}, {TileOpArg::kExpr, nullptr, value}}, {}};
}

namespace {
// T.atomic_add(dst_tile, src_tile) or T.atomic_add(dst[point], value)
const TileOpRegistrar kRegisterAtomicAdd("atomic_add",
                                         [](std::vector<Region> r, std::vector<Expr> e,
                                            const std::map<std::string, int64_t>&, Span s) -> Stmt {
                                           std::optional<Region> src;
                                           if (r.size() > 1) src = r[1];
                                           return std::make_shared<AtomicAddNode>(
                                               r.at(0), src, e.empty() ? nullptr : e[0], std::move(s));
                                         });
}  // namespace

}  // namespace tl
