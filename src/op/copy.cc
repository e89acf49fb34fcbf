// T.copy: moves a tile between any two memory scopes; both sides have the same tile shape (unit
// dims aside), the dtype is converted on the way.
#include "op/tile_op_checks.h"

namespace tl {

void CheckCopy(const CopyNode& c) {
  using namespace op_detail;
  if (!SameTileShape(c.src.ranges, c.dst.ranges))
    throw UserError(ErrorKind::kType, "mismatched slice shapes in T.copy: the source '" + c.src.buffer->name + "' tile is " +
                                          ShapeStr(Extents(c.src.ranges)) + " but the destination '" + c.dst.buffer->name +
                                          "' tile is " + ShapeStr(Extents(c.dst.ranges)), c.span);
}

}  // namespace tl
