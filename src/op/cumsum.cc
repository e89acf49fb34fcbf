// T.cumsum: an inclusive scan along one dim; destination and source tiles have the same shape.
#include <algorithm>

#include "op/tile_op_checks.h"

namespace tl {

void CumsumNode::Check() const {
  const CumsumNode& c = *this;
  using namespace op_detail;
  if (!SameTileShape(c.src.ranges, c.dst.ranges))
    throw UserError(ErrorKind::kType,
                    "T.cumsum destination '" + c.dst.buffer->name + "' is " +
                        ShapeStr(Extents(c.dst.ranges)) + " but the source '" + c.src.buffer->name + "' is " +
                        ShapeStr(Extents(c.src.ranges)) + "; they must have the same shape",
                    c.span);
}

bool CumsumNode::ScansWholeLastAxisLines(int64_t threads) const { return LineOwners(threads) > 0; }

int64_t CumsumNode::LineOwners(int64_t threads) const {
  if (dim < 0 || static_cast<size_t>(dim) + 1 != src.ranges.size()) return 0;
  int64_t lines = 1;
  for (size_t d = 0; d + 1 < src.ranges.size(); ++d) {
    int64_t e = 0;
    if (!AsConstInt(src.ranges[d].extent, &e)) return 0;
    lines *= e;
  }
  if (lines < 2 || threads < 1) return 0;
  int64_t owners = std::min(lines, threads);
  while (threads % owners != 0) --owners;  // a divisor of the block: the rest hold replicas
  if (owners < 2) return 0;
  for (const Region* r : {&src, &dst}) {
    if (r->ranges.size() != r->buffer->shape.size()) return 0;
    for (size_t d = 0; d < r->ranges.size(); ++d) {
      int64_t mn = -1, ext = -1, full = -2;
      if (!AsConstInt(r->ranges[d].min, &mn) || !AsConstInt(r->ranges[d].extent, &ext) ||
          !AsConstInt(r->buffer->shape[d], &full) || mn != 0 || ext != full)
        return 0;
    }
  }
  return owners;
}

std::vector<std::pair<const Region*, Access>> CumsumNode::Regions() const {
  return {{&src, Access::kRead}, {&dst, Access::kWrite}};
}
Stmt CumsumNode::WithOperands(std::vector<Region> r, std::vector<Expr>) const {
  return std::make_shared<CumsumNode>(std::move(r.at(0)), std::move(r.at(1)), dim, reverse, span);
}
std::vector<int64_t> CumsumNode::Attrs() const { return {dim, reverse}; }
TileOpCall CumsumNode::Call() const {
  TileOpCall c{"cumsum",
               {{TileOpArg::kRegion, &src, nullptr}, {TileOpArg::kRegion, &dst, nullptr}},
               {{"dim", std::to_string(dim)}}};
  if (reverse) c.keywords.emplace_back("reverse", "True");
  return c;
}

namespace {
// T.cumsum(src, dst, dim, reverse)
const TileOpRegistrar kRegisterCumsum(
    "cumsum",
    [](std::vector<Region> r, std::vector<Expr>, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      return std::make_shared<CumsumNode>(r.at(0), r.at(1), static_cast<int>(op_detail::AttrOr(a, "dim", 0)),
                                          op_detail::AttrOr(a, "reverse", 0) != 0, std::move(s));
    });
}  // namespace

}  // namespace tl
