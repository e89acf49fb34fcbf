// Fragment layouts (which thread holds which element of a register tile, at which local index)
// and shared-memory swizzles. A Fragment is described both ways:
//   inverse:  (thread, local) -> logical index         used to partition loops over threads
//   forward:  (logical index, replica) -> thread, local  used to address other fragments
// The expressions range over the Fragment's own placeholder vars; callers substitute.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "arith/eval.h"
#include "ir/expr.h"

namespace tl {

struct Fragment {
  std::vector<int64_t> shape;  // the logical tile
  int64_t threads = 0, locals = 0, replicas = 1;
  std::string desc;             // e.g. "mma_C(128x128, warps 2x2)"
  std::string kind;             // "mma_C", "mma_rows", "striped", "replicated"
  std::string origin;           // what asked for it, "<op> at <file>:<line>" (for conflict messages)
  std::vector<int64_t> params;  // mma_C / mma_rows: M, N, wm, wn
  Var tid, loc, rep;            // placeholders
  std::vector<Var> idx;         // placeholders of the forward map, one per dim
  std::vector<Expr> index;      // over (tid, loc)
  Expr valid;                   // over (tid, loc): the slot holds an element (null: always)
  Expr thread;                  // over (idx..., rep)
  Expr local;                   // over (idx...)
  Expr replica;                 // over tid: which replica this thread holds (0 when replicas == 1)

  bool defined() const { return threads > 0; }
  /// Index exprs of slot (tid, loc) with the placeholders replaced.
  std::vector<Expr> IndexAt(const Expr& t, const Expr& l) const;
  Expr ValidAt(const Expr& t, const Expr& l) const;
  Expr ThreadOf(const std::vector<Expr>& i, const Expr& r) const;
  Expr LocalOf(const std::vector<Expr>& i) const;
  Expr ReplicaOf(const Expr& t) const;
  /// A row a thread: a 2-d tile of `threads` rows, element (i, j) in thread i (the thread map is the row
  /// index itself), one replica; each thread's registers are its row (tensor memory read with one column
  /// group).
  bool RowPerThread() const {
    return shape.size() == 2 && idx.size() == 2 && replicas == 1 && shape[0] == threads &&
           locals == shape[1] && thread && thread.get() == idx[0].get();
  }
  /// Same element placement (checked by enumeration; shapes small).
  bool SameAs(const Fragment& o) const;
  /// (thread, local) of every element for replica 0, row-major; for plots and tests.
  std::vector<std::pair<int64_t, int64_t>> Table() const;
};

/// The Fragment as an IR value, `T.fragment(kind, desc, origin, T.list(shape...), threads, locals,
/// replicas, T.list(params...), tid, loc, rep, T.list(idx...), T.list(index...), valid, thread,
/// local, replica)`, so that layouts live in the IR (AttrStmt "tl.layout", loop annotation
/// "tl.loop_layout"), print, and compare structurally. FragmentFromExpr inverts it.
Expr FragmentToExpr(const Fragment& f);
Fragment FragmentFromExpr(const Expr& e);

/// A fragment of `shape` over `threads` threads with `locals` registers each and `reps` replicas:
/// fresh tid/loc/rep/index vars, replica 0; the caller fills in the maps.
Fragment NewFragment(std::vector<int64_t> shape, int64_t threads, int64_t locals, int64_t reps,
                     std::string desc);
/// Accumulator of m16n8k16 mma.sync tiles, for an M x N tile split over a wm x wn warp grid
/// (warp w covers rows (w % wm) * M/wm.. and cols (w / wm) * N/wn..). Also the layout of an
/// A operand held in registers, with N = K and wn = 1.
Fragment MmaAccumulator(int64_t M, int64_t N, int64_t wm, int64_t wn);
/// B operand of m16n8k16 mma.sync held in registers, for a K x N tile whose columns are split
/// over `wn` warps (each warp holds all K rows of its columns). With `trans` the tile is stored
/// N x K. Register (kk, j, r) of a lane, local (kk * N/wn/8 + j) * 4 + r, is b_r of n8 tile j
/// in k-step kk, as in the PTX ISA's figure for the B fragment.
Fragment MmaOperandB(int64_t K, int64_t N, int64_t wn, bool trans, int64_t wm = 1);
/// A operand of m16n8k16 mma.sync held in registers, for an M x K tile under a gemm's wm x wn warp grid:
/// warp w holds the rows of warp row w % wm as mma_C(M x K, warps wm x 1) places them, and the wn warps of
/// a warp row hold the same registers (wn replicas). With wn == 1 it is that mma_C layout. (MmaOperandB's
/// `wm` is the same replication for B: the wm warps of a warp column hold its columns.)
Fragment MmaOperandA(int64_t M, int64_t K, int64_t wm, int64_t wn);
/// A operand of mma.sync m16n8k8 .tf32 held in registers (float32 elements), for an M x K tile under a gemm's
/// wm x wn warp grid (wn replicas, as MmaOperandA). Register (i, kk, e) of a lane, local (i * K/8 + kk) * 4 + e,
/// is a_e of m16 tile i in k8 step kk: row g + 8 * (e & 1), column tg + 4 * (e >> 1) (PTX ISA, "Matrix
/// Fragments for mma.m16n8k8" with .tf32; g = lane / 4, tg = lane % 4).
Fragment MmaOperandATf32(int64_t M, int64_t K, int64_t wm, int64_t wn);
/// B operand of mma.sync m16n8k8 .tf32 held in registers, K x N (N x K with `trans`) under a wm x wn warp grid
/// (wm replicas): local (kk * N/wn/8 + j) * 2 + e is b_e of n8 tile j in k8 step kk: row (k) tg + 4 * e,
/// column (n) g.
Fragment MmaOperandBTf32(int64_t K, int64_t N, int64_t wm, int64_t wn, bool trans);
/// The 8-bit form of a 16-bit mma.sync operand layout (m16n8k32 for int8 / fp8): the same bytes in the same
/// registers, each 16-bit element split into two consecutive 8-bit ones along dimension `kdim` (PTX ISA: the
/// m16n8k32 A and B fragments hold, per .b32 register, the bytes of the m16n8k16 ones). Kind f.kind + "8".
Fragment ByteSplitFragment(const Fragment& f, size_t kdim);
/// The row vector an mma accumulator reduces to along dim 1: row i is held by the four lanes
/// of its quad in every warp of its warp row (replicated 4 * wn times).
Fragment MmaRows(int64_t M, int64_t wm, int64_t wn);
/// Elements dealt to threads in row-major chunks of `vec`: element e is held by thread
/// (e / vec) % threads. With `owners` (a divisor of threads, fewer than threads) the chunks are
/// dealt to the first `owners` threads and thread t holds what thread t % owners holds (threads /
/// owners replicas; params {vec, owners}).
Fragment Striped(const std::vector<int64_t>& shape, int64_t threads, int64_t vec, int64_t owners = 0);
/// The same placement with the dimensions reordered: dimension r of the result is dimension src_of[r] of
/// `f` (a transposed view of a fragment: element [j, i] of the result is where `f` holds [i, j]).
Fragment ReorderFragment(const Fragment& f, const std::vector<int>& src_of);
/// Every thread holds the whole tile.
Fragment Replicated(const std::vector<int64_t>& shape, int64_t threads);

/// The warp grid (wm, wn) of a gemm with `warps` warps on an M x N tile under a policy
/// (0 square, 1 full row: as many warps along M as its 16-row tiles allow, the rest along N;
/// 2 full col: the same with N first). Throws a UserError when the tile cannot be split.
std::pair<int64_t, int64_t> GemmWarpGrid(int64_t M, int64_t N, int64_t warps, int policy);

/// A shape as text, "128x64" (in layout descriptions).
std::string Dims(const std::vector<int64_t>& shape);

/// Physical element offset of (row, col) in a [rows, cols] shared tile of `elem_bytes`-byte
/// elements, XOR-swizzled at 16-byte granularity so that ldmatrix and cp.async rows hit
/// distinct banks. Identity when a row is narrower than 32 bytes.
Expr SwizzledOffset(const Expr& row, const Expr& col, int64_t cols, int elem_bytes);
/// The same map on integers (for tests and bank-conflict analysis).
int64_t SwizzledOffsetInt(int64_t row, int64_t col, int64_t cols, int elem_bytes);

}  // namespace tl
