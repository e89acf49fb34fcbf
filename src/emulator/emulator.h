// The GPU emulator: executes a lowered thread-level PrimFunc (docs/thread_ir.md) on the CPU, lane
// by lane, and checks what a GPU silently gets wrong. The instruction semantics (mma.sync and
// ldmatrix fragment layouts, cp.async groups) follow NVIDIA's PTX ISA and share no code with the
// compiler's layout tables. See docs/emulator.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/function.h"

namespace tl::emu {

/// One finding. kind is "out_of_bounds", "race", "uninitialized_read", "barrier_divergence" or
/// "inactive_lanes"; message names block, thread, buffer, index and the DSL source line.
struct Report {
  std::string kind;
  std::string message;
};

struct Options {
  bool check_races = true;
  bool check_uninit = true;
  /// Out-of-bounds accesses are never performed; this only controls whether they are reported.
  bool check_bounds = true;
  /// Shift counts outside [0, bits) are reported ("shift_count"); the result is the clamped one either way.
  bool check_shift_counts = true;
  int max_reports = 20;
  /// OpenCL sub-groups (cl_khr_subgroups calls of the OpenCL lowering): the size the emulated device
  /// uses, and whether work-item t is in sub-group t / size (contiguous) or t % (number of
  /// sub-groups) (strided). The specification fixes neither; kernels must work under any.
  int subgroup_size = 32;
  bool subgroup_strided = false;
  /// Exact values of integer scalars and symbolic dims; they override `syms` (whose doubles
  /// cannot hold every int64).
  std::map<const VarNode*, int64_t> exact_ints;
};

/// LDS / shared-memory bank accounting of one buffer's reads or writes: 32 banks of 4 bytes, a
/// request served 128 bytes per pass (32 lanes of <= 4 bytes, 16 of 8, 8 of 16: AMD's CDNA LDS phases and
/// NVIDIA's shared-memory wavefronts alike; lanes of a pass are 128 / max(4, bytes) consecutive threads).
/// A pass takes as many cycles as the most distinct 4-byte words any one bank serves in it.
struct BankStats {
  int64_t passes = 0;        // passes executed (per instruction, per group of lanes)
  int64_t extra_cycles = 0;  // sum over passes of (cycles - 1): 0 when conflict-free
  int max_ways = 0;          // the worst pass
};

struct Result {
  std::vector<Report> reports;  // the first max_reports findings, in execution order
  int64_t total_reports = 0;    // all findings, including those not kept
  int64_t lane_ops = 0;         // per-lane statement and expression evaluations executed
  /// Per shared buffer (by name) and direction ("read" / "write"): plain loads and stores, 4/8/16-byte
  /// vector accesses and cp.async destinations.
  std::map<std::pair<std::string, std::string>, BankStats> banks;
};

/// Runs `lowered` over its whole grid, blocks one after another, each block's threads in lockstep.
/// args[i] is the host pointer of the i-th buffer parameter (row-major, contiguous; nullptr for
/// scalar parameters); `syms` gives every scalar parameter and every symbolic shape var (float
/// scalars as double). Throws tl::UserError (kUnsupported) on IR outside the thread-level contract.
Result Run(const PrimFunc& lowered, const std::vector<void*>& args,
           const std::map<const VarNode*, double>& syms, const Options& opt = Options());

}  // namespace tl::emu
