// ExpandViewTileOps and ResolveBufferViews: a kernel may declare buffers that view another buffer's storage
// with a new shape (T.reshape), a new dtype of the same width (T.view) or both (T.Tensor(shape, dtype,
// data=buf.data)). ExpandViewTileOps, the first pass of every pipeline, checks the views and rewrites
// the tile ops on them (below); InjectBoundGuards then guards element accesses of a global view by
// the view's own shape; ResolveBufferViews, right after it, rewrites every access through a view into
// an access of the buffer that owns the storage: the view's indices are flattened row-major
// (plus the view's element offset) and unflattened against the owner's shape; a dtype change reads
// and writes through tl.reinterpret (a bit cast). A tile op on a view keeps its region when the view
// has the owner's shape and dtype; otherwise T.copy and T.fill become T.Parallel loops of element
// accesses, and any other op on such a view is a TileLangUnsupportedError at its line. Afterwards
// no buffer of the function is a view (views again appear only when PlanSharedMemory places
// shared buffers in the kernel's byte pool).
//
// Rejected at the view's declaration: a dtype of another width than the owner's (the IR has no
// bit operations to split or join elements), a byte offset that is not a whole number of elements,
// a view of a scope other than its owner's, and a view that provably has more elements than its owner.
#pragma once
#include "ir/function.h"

namespace tl {

PrimFunc ExpandViewTileOps(const PrimFunc& f);
PrimFunc ResolveBufferViews(const PrimFunc& f);

/// The buffer that owns `b`'s storage (b itself when it is not a view).
const BufferNode* StorageOwner(const Buffer& b);

}  // namespace tl
