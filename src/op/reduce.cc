// T.reduce_{sum,max,min,abssum,absmax}: the destination is the source tile without the reduced dim.
#include "op/tile_op_checks.h"

namespace tl {

void CheckReduce(const ReduceNode& r) {
  using namespace op_detail;
  auto s = Extents(r.src.ranges);
  if (r.dim < 0 || r.dim >= static_cast<int>(s.size()))
    throw UserError(ErrorKind::kType, "dim=" + std::to_string(r.dim) + " of T.reduce_" + ReduceKindName(r.reduce_kind) +
                                          " is out of range for the " + std::to_string(s.size()) + "-d source '" +
                                          r.src.buffer->name + "'", r.span);
  std::vector<Range> expected;
  for (size_t i = 0; i < r.src.ranges.size(); ++i)
    if (static_cast<int>(i) != r.dim) expected.push_back(r.src.ranges[i]);
  if (!SameTileShape(expected, r.dst.ranges))
    throw UserError(ErrorKind::kType, std::string("T.reduce_") + ReduceKindName(r.reduce_kind) + " destination '" +
                                          r.dst.buffer->name + "' is " + ShapeStr(Extents(r.dst.ranges)) + " but reducing '" +
                                          r.src.buffer->name + "' " + ShapeStr(s) + " over dim " + std::to_string(r.dim) +
                                          " gives " + ShapeStr(Extents(expected)), r.span);
}

}  // namespace tl
