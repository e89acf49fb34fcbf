// Shape helpers of the tile ops' semantic checks (TileOpNode::Check, in each op's file).
#pragma once
#include "ir/stmt.h"

namespace tl {
namespace op_detail {
/// The extents of a region without unit dims.
std::vector<Expr> NonUnit(const std::vector<Range>& ranges);
/// "(a, b)" / "(a,)" as Python prints a shape.
std::string ShapeStr(const std::vector<Expr>& extents);
/// Both constant and different (symbolic extents are not compared at compile time).
bool DimsDiffer(const Expr& a, const Expr& b);
bool SameTileShape(const std::vector<Range>& a, const std::vector<Range>& b);
std::vector<Expr> Extents(const std::vector<Range>& ranges);
/// An integer attribute of a tile op's DSL call, or `dflt` when not given.
inline int64_t AttrOr(const std::map<std::string, int64_t>& attrs, const std::string& key, int64_t dflt) {
  auto it = attrs.find(key);
  return it == attrs.end() ? dflt : it->second;
}
}  // namespace op_detail
}  // namespace tl
