// The TMA tensor maps of a lowered CUDA kernel (thread-level IR, docs/thread_ir.md): every distinct
// `tl.tensor_map(&tensor[0, ...], T.list(box...), swizzle)` operand of its `tl.tma_load` calls, in
// order of first appearance. The code generator declares one `const __grid_constant__` parameter per
// entry (after the kernel's other parameters) and the launch spec describes each, so the launcher
// encodes them in the same order.
#pragma once
#include <vector>

#include "ir/function.h"
#include "runtime/launch_spec.h"

namespace tl {

/// The maps of `lowered` (empty when it issues no TMA copy).
std::vector<TensorMapSpec> CollectTensorMaps(const PrimFunc& lowered);
/// The description of one `tl.tensor_map` call of `f`; param is the tensor's index in f->params.
TensorMapSpec TensorMapOf(const PrimFunc& f, const CallNode* map);
/// Position of `map` in CollectTensorMaps(f)'s list (same tensor, box and swizzle).
int TensorMapIndex(const std::vector<TensorMapSpec>& maps, const TensorMapSpec& map);

}  // namespace tl
