// T.atomic_add: dst += src tile (same tile shape), or dst[point] += value.
#include "op/tile_op_checks.h"

namespace tl {

void CheckAtomicAdd(const AtomicAddNode& a) {
  using namespace op_detail;
  if (a.src && !SameTileShape(a.src->ranges, a.dst.ranges))
    throw UserError(ErrorKind::kType, "T.atomic_add destination '" + a.dst.buffer->name + "' tile is " +
                                          ShapeStr(Extents(a.dst.ranges)) + " but the source '" + a.src->buffer->name +
                                          "' tile is " + ShapeStr(Extents(a.src->ranges)), a.span);
}

}  // namespace tl
