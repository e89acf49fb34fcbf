// Shape helpers shared by the tile-op checks.
#include "ir/printer.h"
#include "op/tile_op_checks.h"

namespace tl::op_detail {

std::vector<Expr> Extents(const std::vector<Range>& ranges) {
  std::vector<Expr> out;
  for (auto& r : ranges) out.push_back(r.extent);
  return out;
}

std::vector<Expr> NonUnit(const std::vector<Range>& ranges) {
  std::vector<Expr> out;
  for (auto& r : ranges)
    if (!IsConstInt(r.extent, 1)) out.push_back(r.extent);
  return out;
}

std::string ShapeStr(const std::vector<Expr>& extents) {
  std::string s = "(";
  for (size_t i = 0; i < extents.size(); ++i) s += (i ? ", " : "") + PrintExpr(extents[i]);
  return s + (extents.size() == 1 ? ",)" : ")");
}

bool DimsDiffer(const Expr& a, const Expr& b) {
  int64_t x, y;
  return AsConstInt(a, &x) && AsConstInt(b, &y) && x != y;
}

bool SameTileShape(const std::vector<Range>& a, const std::vector<Range>& b) {
  auto x = NonUnit(a), y = NonUnit(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (DimsDiffer(x[i], y[i])) return false;
  return true;
}

}  // namespace tl::op_detail
