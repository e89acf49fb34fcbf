// T.cumsum: an inclusive scan along one dim; destination and source tiles have the same shape.
#include "op/tile_op_checks.h"

namespace tl {

void CheckCumsum(const CumsumNode& c) {
  using namespace op_detail;
  if (!SameTileShape(c.src.ranges, c.dst.ranges))
    throw UserError(ErrorKind::kType, "T.cumsum destination '" + c.dst.buffer->name + "' is " + ShapeStr(Extents(c.dst.ranges)) +
                                          " but the source '" + c.src.buffer->name + "' is " + ShapeStr(Extents(c.src.ranges)) +
                                          "; they must have the same shape", c.span);
}

}  // namespace tl
