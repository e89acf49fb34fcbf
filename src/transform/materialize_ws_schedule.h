// MaterializeWsSchedule: TileLang's warp-specialisation schedule (T.annotate_ws_schedule; the front end's
// python/tilelang/language/ws_schedule.py) turned into the explicit form the rest of the pipeline lowers
// (docs/warp_specialization.md, "Schedules").
//
// Input: a kernel body wrapped in `tl.ws_schedule` (roles and per-scope role programs, a tl.ws_schedule call)
// and one `tl.ws_pipeline` per protected buffer; statements named by `tl.ws_op_id` (an AttrStmt, or a loop
// annotation). Output, on a target with warp specialisation (features.wgmma: setmaxnreg, warp-group regions,
// mbarriers): the block has num_warps * 32 threads; each pipeline buffer has `depth` versions (a leading
// dimension); each pipeline a `full` and an `empty` mbarrier per version; each role runs
// `if (tx in its warps) { setmaxnreg; its program }`, where a sync is an mbarrier wait or arrival on a per-role
// counter and the ops between an acquire and its commit (a wait and its release) read and write the version
// that counter selects. Elsewhere the schedule is dropped with a warning: it never changes what the kernel
// computes, so the kernel runs as written. A schedule that cannot be materialised is a UserError at the
// statement or the schedule's line.
#pragma once
#include "transform/pass_registry.h"

namespace tl {

/// AttrStmt key around a producer's T.copy (global -> a pipeline buffer) between an acquire and its commit; value:
/// the pipeline's full barrier of the version. LegalizeTileOpsGPU makes it a TMA copy completing on that barrier
/// (as T.tma_copy) where it can be one, else keeps the copy (which completes before the producer arrives).
extern const char* const kWsCopyBarrierKey;

PrimFunc MaterializeWsSchedule(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
