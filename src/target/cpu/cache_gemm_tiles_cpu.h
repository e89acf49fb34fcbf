// CacheGemmTilesCPU: on the CPU target, the tiles a GEMM kernel copies out of its read-only input
// tensors are copied once per call instead of once per block. Each such input gets a tile cache:
// one slot per tile of the tensor (the tensor cut into the copy's tile shape), filled by the first
// worker that needs the tile, while any other worker that needs it meanwhile waits; later blocks
// read the slot in place. A B tile that PackGemmTilesCPU packs is cached packed, so its panels are
// built once per call too. This is the reuse a BLAS library gets from packing A and B once.
//
// The rewrite is recorded in the IR:
//   T.attr(t, "tl.cpu_tile_cache", tl_cpu_cache_decl(id, slots))   wraps the kernel body
//   T.attr(t, "tl.cpu_cached_tile", tl_cpu_cache_slot(id, slot))   wraps the copy into t and the
//                                                                   statements after it
// LowerTileOpsCPU binds t to the slot (t is then not a per-worker buffer) and runs the copy only
// when tl_cpu::TileCache::claim says this worker fills the slot; CodegenCPU declares the caches
// before the parallel region.
//
// Applies to an on-chip tile t (not a view, nor viewed by one) when: exactly one copy writes t, a
// whole-tile copy out of a 2-D global tensor of constant shape that nothing in the function writes
// (the kernel's caches together hold at most 1 GiB); the copy's start along each tile dim is a
// multiple of the tile's extent there (so tiles never overlap); every other reference to t is a
// whole-tile A or B operand of a gemm; the copy is an item of a statement sequence (or guarded by
// an if that is) and every gemm reading t comes after it in that sequence. Requires: tile-level IR.
// Records each cache in `choices`.
#pragma once
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl {
PrimFunc CacheGemmTilesCPU(const PrimFunc& f, std::vector<std::string>* choices);
}  // namespace tl
