// T.atomic_add: dst += src tile (same tile shape), or dst[point] += value.
#include "op/tile_op_checks.h"

namespace tl {

const char* AtomicSuffix(AtomicKind k) {
  switch (k) {
    case AtomicKind::kMax: return "max";
    case AtomicKind::kMin: return "min";
    default: return "add";
  }
}

void AtomicAddNode::Check() const {
  const AtomicAddNode& a = *this;
  using namespace op_detail;
  const std::string name = "T." + CallName();
  const DataType t = a.dst.buffer->dtype;
  if (kind != AtomicKind::kAdd && !((t.is_float() || t.is_int() || t.is_uint()) && !t.is_bool() &&
                                     (t.bits() == 32 || t.bits() == 64) && t.lanes() == 1))
    throw UserError(ErrorKind::kType,
                    name + " updates 32- and 64-bit elements (int32, uint32, int64, uint64, float32, float64); '" +
                        a.dst.buffer->name + "' is " + t.str(),
                    a.span);
  if (use_tma && (kind != AtomicKind::kAdd || !a.src))
    throw UserError(ErrorKind::kType,
                    name + "(..., use_tma=True) adds a tile (a buffer region as the value) with T.atomic_add only",
                    a.span);
  if (a.src && !SameTileShape(a.src->ranges, a.dst.ranges))
    throw UserError(ErrorKind::kType,
                    name + " destination '" + a.dst.buffer->name + "' tile is " +
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
  return std::make_shared<AtomicAddNode>(std::move(r.at(0)), std::move(s), e.empty() ? nullptr : e[0], span,
                                         kind, use_tma);
}
TileOpCall AtomicAddNode::Call() const {
  if (src) {
    TileOpCall c{CallName(), {{TileOpArg::kRegion, &dst, nullptr}, {TileOpArg::kRegion, &*src, nullptr}}, {}};
    if (use_tma) c.keywords.emplace_back("use_tma", "True");
    return c;
  }
  return {CallName(), {{TileOpArg::kPoint, &dst, nullptr}, {TileOpArg::kExpr, nullptr, value}}, {}};
}

namespace {
// T.atomic_<add|max|min>(dst_tile, src_tile) or T.atomic_<add|max|min>(dst[point], value)
TileOpFactory AtomicFactory(AtomicKind k) {
  return [k](std::vector<Region> r, std::vector<Expr> e, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
    std::optional<Region> src;
    if (r.size() > 1) src = r[1];
    return std::make_shared<AtomicAddNode>(r.at(0), src, e.empty() ? nullptr : e[0], std::move(s), k,
                                           op_detail::AttrOr(a, "use_tma", 0) != 0);
  };
}
const TileOpRegistrar kRegisterAtomicAdd("atomic_add", AtomicFactory(AtomicKind::kAdd));
const TileOpRegistrar kRegisterAtomicMax("atomic_max", AtomicFactory(AtomicKind::kMax));
const TileOpRegistrar kRegisterAtomicMin("atomic_min", AtomicFactory(AtomicKind::kMin));
}  // namespace

}  // namespace tl
