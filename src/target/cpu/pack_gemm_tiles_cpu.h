// PackGemmTilesCPU: on the CPU target, an on-chip tile that is only ever filled by T.copy from a
// global tensor and read as the B operand of T.gemm is stored the way the micro-kernel reads B:
// NR-column panels (NR = 16 on AVX2, 32 on AVX-512), each K x NR floats, contiguous. The copy
// packs (widening fp16/bf16/fp8 to float and transposing a trans_B tile on the way, zero-filling
// what lies outside the tensor) and the gemm reads the panels as they are, where it would otherwise
// pack B again on every call.
//
// The rewrite is recorded in the IR: the kernel body is wrapped in
//   T.attr(B_s, "tl.cpu_packed_b", trans_B)
// for each such tile; LowerTileOpsCPU gives the tile a float buffer of K x roundup(N, 32) elements,
// lowers its copies to tl_cpu::pack_b_tile and its gemms to tl_cpu::gemm_packed_b.
//
// Applies to a tile when: it is allocated by the kernel and is not a view, nor viewed by one; every
// reference to it is the whole-tile destination of a copy from a global tensor of the same dtype,
// whose two tile dims are the tile's (the second being the tensor's contiguous last dim), or the
// whole-tile B operand of a gemm with a float32 accumulator; all those gemms agree on trans_B; and
// not both gemm operands are bfloat16 (on AVX512-BF16 targets those run vdpbf16ps on the raw
// tiles). Requires: tile-level IR. Records each packed tile in `choices`.
#pragma once
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl {
PrimFunc PackGemmTilesCPU(const PrimFunc& f, std::vector<std::string>* choices);
}  // namespace tl
