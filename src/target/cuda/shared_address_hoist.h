// Loop-invariant shared-memory addresses for the CUDA code generator (issue 14).
//
// Inside a serial loop (the pipelined main loop of a GEMM), the shared operands of cp.async and
// ldmatrix are `S[index]` with an index such as
//   ((kk*2 + lane/16) ^ (lane%8)/2) * 8 + i*512 + (k%2)*4096 + ...
// Its thread-dependent part (XOR swizzles, divisions of the thread index) does not change from one
// iteration to the next; recomputing it every iteration costs more integer instructions than the
// tensor-core work of the loop. PlanSharedAddressHoist splits each such index into
//   hoisted: the terms that use only vars defined outside the loop (thread and block indices),
//            possibly with the unrolled loop vars between the loop and the access, and
//   rest:    the terms that use the loop's own vars, or only unrolled loop vars (immediates once
//            unrolled),
// so that the code generator computes `smem_s + hoisted * bytes` once per thread before the loop
// (an array over the unrolled vars it depends on, kept in registers) and adds `rest * bytes` inside
// it. The split is an exact rewrite of the sum, so the IR and the emulator are untouched.
#pragma once
#include <utility>
#include <vector>

#include "ir/function.h"

namespace tl {

struct SharedAddressGroup {
  Buffer buffer;  // the shared (1-D index) or global (N-D) buffer the addresses point into
  std::vector<std::vector<Expr>> hoisted;  // per index: the terms computed before the loop (summed)
  std::vector<const ForNode*> loops;       // unrolled loops inside the serial loop that they depend on
  int64_t count = 1;                       // product of those loops' extents
};

struct SharedAddressUse {
  int group = -1;                       // index into SharedAddressPlan::groups
  std::vector<std::vector<Expr>> rest;  // per index: the terms left inside the loop (empty: zero)
};

struct SharedAddressPlan {
  std::vector<SharedAddressGroup> groups;
  std::vector<std::pair<const BufferLoadNode*, SharedAddressUse>> uses;  // per operand, in program order
};

/// Plans the hoisting for the cp.async / ldmatrix operands inside the serial loop `loop`: the shared
/// ones (a 32-bit shared-window address) and the global source of cp.async (a 64-bit pointer to the
/// element the hoisted terms give, to which the loop adds the rest: one add per iteration instead of
/// a 64-bit multiply-add per copy).
/// `max_count` bounds one group's array (registers).
SharedAddressPlan PlanSharedAddressHoist(const ForNode* loop, int64_t max_count = 8);

}  // namespace tl
