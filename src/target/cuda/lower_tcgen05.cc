// The CUDA backend's tcgen05 lowerings (the sm_100a family; docs/blackwell.md), on the instruction layer of
// include/tl_device/cuda/blackwell.h (emulated in src/emulator/intrinsics_tcgen05.cc):
//   T.tcgen05_gemm(A, B, C_tmem, ..., mbar=, clear_accum=)   one thread issues K / 16 tcgen05.mma kind::f16 into
//       the tensor-memory accumulator (A and B through shared memory descriptors of the compiler's swizzled tiles)
//       and, with mbar, commits them to it; the call does not wait (TileLang's explicit form)
//   T.copy(C_tmem, C_fragment)   tcgen05.ld .32x32b: warp w reads lanes 32 (w % 4) .. + 32, the fragment's rows;
//       with 128 k threads the k groups of four warps read consecutive column ranges (the tmem_rows layout)
//   LowerTensorMemoryCUDA   the kernel's T.alloc_tmem buffers become columns of one tcgen05.alloc (warp 0, at the
//       start; freed by warp 0 at the end), their addresses read from a shared word
#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "layout/fragment.h"
#include "layout/hopper_layout.h"
#include "target/cuda/passes.h"
#include "transform/gpu/hopper_wgmma.h"
#include "transform/gpu/tile_lowerer.h"
#include "transform/gpu_util.h"
#include "transform/layout_rules.h"

namespace tl {

namespace {
using namespace gpu_pass;

Expr U32(int64_t v) { return IntImm(DataType::UInt(32), v); }

// The base address of tensor-memory buffer b (lane 0, its first column): a placeholder the pass below replaces.
Expr TmemBase(const Buffer& b) {
  return Call(DataType::UInt(32), "tl.tmem_base", {Load(b, std::vector<Expr>(b->shape.size(), C(0)))});
}

// The [M, N] matrix of a tensor-memory buffer, M = 128 lanes: [128, N], or [S, 128, N] (S matrices side by
// side, matrix s at columns [s N, (s + 1) N): TileLang's double-buffered accumulators); or M = 64, a
// cta_group::1 MMA accumulator (layout F: rows 16 q .. 16 q + 15 in lanes 32 q .. 32 q + 15). Returns (M, N).
std::pair<int64_t, int64_t> TmemShape(const Buffer& b, const Span& sp) {
  int64_t m = 0, n = 0, st = 1;
  const auto& sh = b->shape;
  const bool ok = (sh.size() == 2 || (sh.size() == 3 && AsConstInt(sh[0], &st) && st >= 1)) &&
                  AsConstInt(sh[sh.size() - 2], &m) && AsConstInt(sh.back(), &n) && (m == 128 || m == 64) && n >= 1 &&
                  (b->dtype.bits() == 32 || (b->dtype.bits() == 16 && n % 2 == 0));
  if (!ok)
    throw UserError(
        ErrorKind::kUnsupported,
        "tensor memory '" + b->name +
            "' must be a [128, N] or [S, 128, N] buffer (or [64, N], an M = 64 MMA accumulator) of a 32-bit "
            "dtype, or of a 16-bit one with N even (two values a 32-bit column: an MMA operand A; or one, a "
            "float16 accumulator); got " +
            b->dtype.str() + " [" + [&] {
              std::string r;
              for (auto& e : sh) r += (r.empty() ? "" : ", ") + PrintExpr(e);
              return r;
            }() + "]",
        sp);
  return {m, n};
}

// Values of buffer b a 32-bit tensor-memory column holds: 1, or 2 for 16-bit dtypes packed (an MMA operand A,
// the lower K first); 1 for a 16-bit buffer `unpacked` (a float16 accumulator: bits 0-15 of its column).
int64_t TmemPerColumn(const Buffer& b, bool unpacked) { return unpacked ? 1 : 32 / b->dtype.bits(); }
bool Unpacked(const gpu_lowering::GpuTileLowerer& L, const Buffer& b) {
  return L.tmem_unpacked_.count(b.get()) > 0;
}

// The columns of tensor memory buffer b: S * N / (values a column).
int64_t TmemColumns(const Buffer& b, bool unpacked, const Span& sp) {
  int64_t st = 1;
  if (b->shape.size() == 3) AsConstInt(b->shape[0], &st);
  return st * TmemShape(b, sp).second / TmemPerColumn(b, unpacked);
}

// A region of a tensor-memory buffer: all M lanes of one matrix (a stage index of a 3-D buffer, which may
// be a kernel expression) and a constant number of its columns. Returns the first 32-bit column (relative to
// the buffer's first) and sets *ncols to the region's elements per row.
Expr TmemRegionColumn(gpu_lowering::GpuTileLowerer& L, const Region& r, int64_t* ncols, const char* what,
                      const Span& sp) {
  const auto [M, N] = TmemShape(r.buffer, sp);
  const size_t d = r.ranges.size();
  int64_t ext = 0;
  auto bad = [&]() {
    throw UserError(
        ErrorKind::kUnsupported,
        std::string(what) + " of tensor memory '" + r.buffer->name + "' takes all " + std::to_string(M) +
            " lanes of one matrix (C[:, c0:c1], or C[s, :, c0:c1] of a [S, 128, N] buffer) and a constant "
            "number of columns",
        sp);
  };
  if (!IsConstInt(r.ranges[d - 2].min, 0) || !IsConstInt(r.ranges[d - 2].extent, M) ||
      !AsConstInt(r.ranges.back().extent, &ext))
    bad();
  if (d == 3 && !IsConstInt(r.ranges[0].extent, 1)) bad();
  int64_t c0 = 0;
  if (ext > N || (AsConstInt(r.ranges.back().min, &c0) && (c0 < 0 || c0 + ext > N))) bad();
  const int64_t per = TmemPerColumn(r.buffer, Unpacked(L, r.buffer));
  if (ext % per || (AsConstInt(r.ranges.back().min, &c0) && c0 % per)) bad();
  *ncols = ext;
  // (a kernel expression: an unrolled loop's column block); 16-bit values two a column
  Expr col = Div(L.VisitExpr(r.ranges.back().min), per);
  if (d == 3) col = L.VisitExpr(r.ranges[0].min) * C(N / per) + col;
  return Simplify(col);
}

// Fragment rows on lanes: element (r, c) of an M = 128 x N tile is held by thread r + 128 (c / (N / G)) at local
// c % (N / G), G = threads / 128 column groups (the .32x32b data path: warp w reaches lanes 32 (w % 4) + lane).
Fragment TmemRows(int64_t N, int64_t threads) {
  const int64_t G = threads / 128, per = N / G;
  Fragment f = NewFragment({128, N}, threads, per, 1,
                           "tmem_rows(128x" + std::to_string(N) + ", " + std::to_string(G) + " column group(s))");
  f.kind = "tmem_rows";
  f.params = {128, N, G};
  f.index = {Mod(f.tid, 128), Div(f.tid, 128) * C(per) + f.loc};
  // (one column group: the row alone names the thread, which a row-wise loop over the columns can then prove)
  f.thread = G == 1 ? f.idx[0] : f.idx[0] + Div(f.idx[1], per) * C(128);
  f.local = Mod(f.idx[1], per);
  f.replica = C(0);
  return f;
}

// An M = 64 accumulator (layout F) on lanes: warp w reaches rows 16 (w % 4) .. + 16 in the first 16 lanes of
// its quarter, with the .16x32bx2 data path its lanes t < 16 the first half of the warp's column group, lanes
// t >= 16 (the same rows) the second: element (r, c) is held by thread 32 (r / 16 + 4 (c / (N / G))) + r % 16
// + 16 ((c % (N / G)) / H) at local c % H, G = threads / 128 column groups, H = N / (2 G).
Fragment TmemRows64(int64_t N, int64_t threads) {
  const int64_t G = threads / 128, per = N / G, H = per / 2;
  Fragment f = NewFragment({64, N}, threads, H, 1,
                           "tmem_rows64(64x" + std::to_string(N) + ", " + std::to_string(G) +
                               " column group(s), layout F)");
  f.kind = "tmem_rows64";
  f.params = {64, N, G};
  Expr w = Div(f.tid, 32), l = Mod(f.tid, 32);
  f.index = {Mod(w, 4) * C(16) + Mod(l, 16), Div(w, 4) * C(per) + Div(l, 16) * C(H) + f.loc};
  f.thread = (Div(f.idx[0], 16) + Div(f.idx[1], per) * C(4)) * C(32) + Mod(f.idx[0], 16) +
             Div(Mod(f.idx[1], per), H) * C(16);
  f.local = Mod(f.idx[1], H);
  f.replica = C(0);
  return f;
}

// The layout rule of a copy out of tensor memory: the destination fragment takes the tmem_rows layout.
const LayoutRuleRegistrar kTmemCopyRule("copy", [](LayoutRuleContext& c, const TileOpNode& n) {
  auto* cp = static_cast<const CopyNode*>(&n);
  const bool load =
      cp->src.buffer->scope == Scope::kTensorMemory && cp->dst.buffer->scope == Scope::kFragment;
  const bool store =
      cp->dst.buffer->scope == Scope::kTensorMemory && cp->src.buffer->scope == Scope::kFragment;
  if (!load && !store) return false;
  const Region& tm = load ? cp->src : cp->dst;
  const Buffer& frag = load ? cp->dst.buffer : cp->src.buffer;
  const int64_t M = TmemShape(tm.buffer, n.span).first;
  int64_t N = 0, T = c.threads();
  if (!AsConstInt(tm.ranges.back().extent, &N))
    throw UserError(ErrorKind::kUnsupported, "T.copy of tensor memory moves a constant column range", n.span);
  std::vector<int64_t> dshape;
  for (auto& e : frag->shape)
    dshape.push_back(ConstOr(e, n.span, "a fragment copied to or from tensor memory"));
  // M = 64 (layout F, .16x32bx2): each warp's lane halves read two column ranges, so 2 G divides N; M = 128:
  // G divides N, 16-bit values whole 32-bit columns a thread where they are packed in pairs
  const bool m64 = M == 64;
  const int64_t G = T / 128;
  const bool ok = T % 128 == 0 && dshape == std::vector<int64_t>{M, N} &&
                  (m64 ? N % (2 * G) == 0 : N % G == 0 && (N / G) % (32 / tm.buffer->dtype.bits()) == 0);
  const std::string shape = "[" + std::to_string(M) + ", " + std::to_string(N) + "]";
  if (!ok)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.copy of tensor memory '" + tm.buffer->name + "' " + shape +
            (m64 ? " (an M = 64 accumulator)" : "") + " and a fragment needs a whole " + shape +
            " fragment and a block of 128 k threads whose " +
            (m64 ? "2 k divides N (tcgen05.ld .16x32bx2: each warp 16 rows, its lane halves two "
                   "column ranges)"
                 : "k divides N (tcgen05.ld / st reach 32 lanes per warp; 16-bit values whole 32-bit "
                   "columns a thread)") +
            "; the block has " + std::to_string(T),
        n.span);
  const std::string what = m64 ? " .16x32bx2)" : ")";
  return c.Assign(
      frag, m64 ? TmemRows64(N, T) : TmemRows(N, T),
      load ? "T.copy from tensor memory (tcgen05.ld" + what : "T.copy into tensor memory (tcgen05.st" + what,
      n.span);
});

}  // namespace

namespace gpu_lowering {
namespace {

void NeedTcgen05(const GpuTileLowerer& L, const std::string& what, const Span& sp) {
  if (!L.ctx_.features.tcgen05)
    throw UserError(ErrorKind::kUnsupported,
                    what + " needs the tcgen05 family (cuda -arch=sm_100a / sm_103a / sm_110a); the target is " +
                        L.ctx_.features.label,
                    sp);
}

Expr Rank() { return Call(DataType::Int(32), "tl.cluster_ctarank", {}); }

// tcgen05.commit to `mbar`: cta_group::1, or for 2-CTA MMAs cta_group::2 with one arrival on the barrier at
// the same offset in both blocks of the pair (.multicast::cluster, the mask of ranks 2i and 2i + 1).
Stmt Commit(GpuTileLowerer& L, const Expr& mbar, bool pair, const Span& sp) {
  if (!pair) return Call0("tl.tcgen05_commit", {L.VisitExpr(mbar)}, sp);
  Expr mask = Binary(BinaryOp::kShl, C(3), Binary(BinaryOp::kBitAnd, Rank(), C(~int64_t{1})));
  return Call0("tl.tcgen05_commit_cg2", {L.VisitExpr(mbar), mask}, sp);
}

// 2-CTA work is issued by the pair's even block only.
Stmt PairLeader(const Stmt& st, bool pair, const Span& sp) {
  return pair ? If(Eq(Mod(Rank(), 2), C(0)), st, nullptr, sp) : st;
}

Stmt LowerTcgen05Gemm(GpuTileLowerer& L, const Tcgen05GemmNode* g) {
  const Span sp = g->span;
  NeedTcgen05(L, "T.tcgen05_gemm", sp);
  auto bad = [&](const std::string& m) { throw UserError(ErrorKind::kUnsupported, "T.tcgen05_gemm: " + m, sp); };
  // Where every thread reaches it, the issue is preceded by a barrier of the whole block (the operands'
  // writers and their fences). In a branch on the thread index (TileLang's warp-specialised kernels: `elif tx
  // < 64:` issues the MMAs) the branch's first thread issues, ordered after the operands' producers by the
  // mbarrier waits the program has there (no barrier: the other threads do not reach it).
  const bool in_branch = L.thread_conditions_ > 0;
  // (inside a region of warp groups lowered for its own threads, only from a branch whose first thread is
  // known: the region's barrier is not the block's)
  if ((L.region_.lo != 0 || L.region_.hi != L.kernel_threads_) && !in_branch)
    bad("inside a T.ws warp-group region is not implemented; issue it in an `if tx ...` branch or where "
        "every thread reaches it");
  if (in_branch && !L.leader_in_branch_)
    bad("in a branch on the thread index whose threads are not a known range (e.g. `if tx % 2 == 0`), no "
        "thread "
        "of it can be named to issue the MMAs; branch on a range (`if tx < 32:`, `elif tx < 64:`)");
  for (const Region* r : {&g->A, &g->B})  // an fp4 tile PadFp4TilesCUDA / PackNvf4TilesCUDA could not store
    if (r->buffer->dtype.is_mx_float())
      bad("the " + r->buffer->dtype.str() + " operand '" + r->buffer->name +
          (g->Nvf4() ? "' of an NVFP4 gemm must be stored two values a byte, which this compiler does for a "
                       "shared tile "
                       "only filled by copies (T.copy, T.tma_copy) of a float4_e2m1fn tensor only so copied, "
                       "and only "
                       "read, K-major, as NVFP4 operands; '"
                     : "' must be stored as the tensor cores read fp4 (16 values of K two a byte in the "
                       "first 8 bytes "
                       "of each 16; TileLang's float4_e2m1_unpacked), which this compiler does for a shared "
                       "tile that "
                       "only T.tma_copy fills, from a float4_e2m1fn tensor only so copied (TMA format "
                       "16U4_ALIGN16B), "
                       "and that only tcgen05 gemms read (K-major); '") +
          r->buffer->name +
          "' or its tensor has another use (a T.copy, an element access, a non-tcgen05 op)");
  const int64_t M = TmemShape(g->C.buffer, sp).first;
  int64_t N = 0;
  const Expr c_col = TmemRegionColumn(L, g->C, &N, "the accumulator", sp);
  const bool pair = g->use_2cta;  // cta_group::2: M = 256 across the pair, each block N / 2 columns of B
  if (M == 64 && (pair || g->A.buffer->scope == Scope::kTensorMemory || g->scaled()))
    bad("an M = 64 accumulator ('" + g->C.buffer->name +
        "' [64, N]) is implemented for cta_group::1 MMAs with A and B in shared memory, not block-scaled; "
        "use_2cta takes 128 rows a block");
  if (M == 64 ? (N % 8 || N > 256) : (N % 16 || N > 256))
    bad("N = " + std::to_string(N) + ": tcgen05.mma (M = " + std::to_string(M) + ") takes N in " +
        (M == 64 ? "8, 16, ..., 256" : "16, 32, ..., 256"));
  if (pair && N % 32)
    bad("use_2cta with N = " + std::to_string(N) +
        ": each block of the pair holds N / 2 columns of B, a multiple "
        "of 16 (N in 32, 64, ..., 256)");
  // A in tensor memory (TileLang's mma_ts: P @ V with P stored by the threads): 16-bit values, two a column,
  // K-major; the instruction reads A's 16 columns k of the step at its tensor-memory address
  const bool a_tmem = g->A.buffer->scope == Scope::kTensorMemory;
  int64_t a_k = 0;
  Expr a_col;
  WgmmaOperand oa, ob;
  if (a_tmem) {
    if (g->trans_A) bad("operand A in tensor memory is K-major: transpose_A must be False");
    if (g->A.buffer->dtype.bits() != 16)
      bad("operand A in tensor memory must be float16 or bfloat16 (kind::f16); got " +
          g->A.buffer->dtype.str());
    a_col = TmemRegionColumn(L, g->A, &a_k, "operand A", sp);
    oa.shape = {128, a_k};
  } else if (!WgmmaOperandOf(g->A, &oa)) {
    bad("A must be a 2-d shared tile or tensor memory");
  }
  if (!WgmmaOperandOf(g->B, &ob)) bad("B must be a 2-d shared tile");
  const bool i8 = g->C.buffer->dtype == DataType::Int(32);  // kind::i8 (s8 / u8 into s32)
  const bool scaled = g->scaled();  // kind::mxf8f6f4.block_scale (MXFP8: e4m3 / e5m2 with E8M0 scales)
  // NVFP4 (granularity 16): kind::mxf4nvf4.block_scale.block16, fp4 two values a byte (PackNvf4TilesCUDA), K
  // 64 values (32 bytes) an instruction, UE4M3 scales
  const bool nvf4 = g->Nvf4();
  // MXFP4 with a scale per 32 values, both operands two values a byte: kind::mxf4.block_scale.scale_vec::2X
  // (k64, E8M0 scales: a step's two are the half-word at byte (k_start + 64 s) / 32 % 4 of each word)
  const bool mxf4 = g->Mxf4() && g->PackedA() && g->PackedB();
  const bool two = nvf4 || mxf4;  // fp4 two values a byte, k64 an instruction
  if (nvf4 && !(g->PackedA() && g->PackedB()))
    bad("NVFP4 operands (sf granularity 16: kind::mxf4nvf4) are read two values a byte, which this compiler "
        "stores for fp4 shared tiles only filled by copies of fp4 tensors and only read as NVFP4 operands "
        "(K-major); '" +
        g->A.buffer->name + "' or '" + g->B.buffer->name + "' has another use");
  if (scaled && a_tmem) bad("operand A in tensor memory is not implemented for block-scaled gemms");
  if (i8 && !L.ctx_.features.tcgen05_i8)
    bad("8-bit integer operands (tcgen05.mma kind::i8) are not supported on " + L.ctx_.features.arch +
        " (sm_100a and sm_110a have them)");
  // 8-bit operands: kind::f8f6f4 (e4m3 / e5m2, or e2m1 in the padded layout: Tcgen05GemmNode::fp4) or
  // kind::i8
  const bool f8 = IsFp8(g->A.buffer->dtype) || g->PaddedType(false) || two || i8;
  // float32 A and B: kind::tf32, k8 (32 bytes). The tensor cores read tf32, the top 19 bits of each value
  // (the PTX ISA says wgmma truncates the lower 13 bits; tcgen05's text says nothing: the emulators truncate)
  const bool tf32 = g->A.buffer->dtype == DataType::Float(32);
  const int eb = tf32 ? 4 : f8 ? 1 : 2;
  const int64_t ks = tf32 ? 8 : f8 ? 32 : 16;  // K of one instruction: 32 bytes
  // A is [M, K] (K-major) or, transposed, [K, M]; B is [K, N] (MN-major) or, transposed, [N, K] (K-major).
  const bool a_mn = g->trans_A, b_mn = !g->trans_B;
  const int64_t am = a_mn ? oa.shape[1] : oa.shape[0], K = a_mn ? oa.shape[0] : oa.shape[1];
  const int64_t bn = b_mn ? ob.shape[1] : ob.shape[0], bk = b_mn ? ob.shape[0] : ob.shape[1];
  if (am != M || bn * (pair ? 2 : 1) != N || bk != K)
    bad("shapes do not agree: A " + std::to_string(oa.shape[0]) + "x" + std::to_string(oa.shape[1]) + ", B " +
        std::to_string(ob.shape[0]) + "x" + std::to_string(ob.shape[1]) + ", C " + std::to_string(M) + "x" + std::to_string(N) +
        " (transpose_A " + std::to_string(g->trans_A) + ", transpose_B " + std::to_string(g->trans_B) + ")" +
        (pair ? "; with use_2cta each block holds N / 2 = " + std::to_string(N / 2) + " columns of B" : ""));
  if (K % ks)
    bad(two ? "K = " + std::to_string(2 * K) + " must be a multiple of 64 (tcgen05.mma kind::" +
                  (nvf4 ? "mxf4nvf4" : "mxf4") + " takes k64)"
            : "K = " + std::to_string(K) + " must be a multiple of " + std::to_string(ks) +
                  " (tcgen05.mma takes k" + std::to_string(ks) + " here)");
  const std::vector<int64_t> as = a_tmem ? std::vector<int64_t>{ob.rows, ob.cols}
                                         : std::vector<int64_t>{oa.rows, oa.cols},
                             bs = {ob.rows, ob.cols};
  if (!HopperSwizzleBytes(as[0], as[1], eb) || !HopperSwizzleBytes(bs[0], bs[1], eb))
    bad("an operand's shared tile has no 32/64/128-byte swizzle layout (rows of 32, 64 or a multiple of 128 bytes)");
  const OperandDesc da = DescOf(as, a_mn, eb), db = DescOf(bs, b_mn, eb);
  auto mode = [](const OperandDesc& d) { return d.mode == 1 ? 2 : d.mode == 2 ? 4 : 6; };  // tcgen05's encoding
  // The instruction descriptor (PTX ISA, tcgen05 "Instruction Descriptor", kind::f16): F32 D, F16 / BF16 A
  // and B, MN-major (transpose) bits, N >> 3, M >> 4. A / B types: kind::f16 0 F16, 1 BF16; kind::f8f6f4 0
  // E4M3, 1 E5M2. kind::i8: 0 unsigned, 1 signed 8-bit, D type S32 (2). kind::f8f6f4 E2M1 = 5 (an fp4 operand
  // stored 16 values in the first 8 bytes of each 16)
  // kind::mxf4nvf4 / kind::mxf4: E2M1 = 1 (their instruction descriptor's own encoding)
  auto type = [&](DataType t, int padded) {
    if (i8) return int64_t(t.is_int());
    if (two) return int64_t{1};
    if (tf32) return int64_t{2};         // TF32 = 2
    if (padded) return int64_t{padded};  // E2M1 5, E2M3 3, E3M2 4
    return int64_t(f8 ? t.code() == DataType::Code::kFloat8E5M2 : t == DataType::BFloat16());
  };
  const int64_t MM = pair ? 2 * M : M;  // the instruction's M: the pair's 256 rows
  // (block-scaled: no D type, bit 23 the scale type, 1 = UE8M0; the scale bytes' ids at 4-5 (B) and 29-30
  // (A), set per k32 step below)
  // D type: 0 F16, 1 F32, 2 S32
  const bool d16 = g->C.buffer->dtype == DataType::Float(16);
  // (bit 23, the scale type: 1 UE8M0, 0 UE4M3)
  const int64_t idesc = (scaled ? int64_t{nvf4 ? 0 : 1} << 23
                                : (i8    ? 2
                                   : d16 ? 0
                                         : 1)
                                      << 4) |
                        (type(g->A.buffer->dtype, g->PaddedType(false)) << 7) |
                        (type(g->B.buffer->dtype, g->PaddedType(true)) << 10) | (int64_t(a_mn) << 15) |
                        (int64_t(b_mn) << 16) | ((N >> 3) << 17) | ((MM >> 4) << 24);
  const std::string kind = nvf4     ? "mxf4nvf4"
                           : mxf4   ? "mxf4"
                           : scaled ? "mxf8f6f4"
                           : i8     ? "i8"
                           : f8     ? "f8f6f4"
                           : tf32   ? "tf32"
                                    : "f16";
  // A scale word holds 4 groups' scales, 4 g K values (g the granularity; NVFP4: one k64 step whole). A gemm
  // of K values covering W > 1 words a row takes word groups 0 .. W - 1 of what T.tcgen05_cp_warpx4 copied
  // (group q of A at columns q M / 32 .., of B at q N / 32 ..: the chunks of the group-major words in order);
  // a gemm inside one word (W = 1) its byte of the word group copied last. Step s reads group ((k_start + kv
  // s) / 4 g) % W.
  const int64_t kv = two ? 64 : 32, Kv = two ? 2 * K : K;  // K values a step, of the gemm
  auto words = [&](int64_t gran, const char* which) {
    const int64_t w = 4 * gran;
    if (Kv >= w ? Kv % w : w % Kv)
      bad(std::string("the gemm's K (") + std::to_string(Kv) + " values) and a scale word of " + which +
          " (4 x " + std::to_string(gran) + " = " + std::to_string(w) + " values) must divide one another");
    return Kv >= w ? Kv / w : int64_t{1};
  };
  const int64_t Wa = scaled ? words(g->gran_a, "A") : 1, Wb = scaled ? words(g->gran_b, "B") : 1;
  // The scale factors (T.tcgen05_cp_warpx4's layout): rows m of A at column m / 32 of SFA (each block its own
  // 128), columns n of B at column n / 32 of SFB (all N of the instruction in each block).
  Expr sfa_addr, sfb_addr;
  if (scaled) {
    int64_t na = 0, nb = 0;
    const Expr ca = TmemRegionColumn(L, g->SFA, &na, "the scale factors of A", sp);
    const Expr cb = TmemRegionColumn(L, g->SFB, &nb, "the scale factors of B", sp);
    if (na < Wa * M / 32 || nb < Wb * N / 32)
      bad("the scale factors need " + std::to_string(Wa * M / 32) + " columns of tensor memory for A ('" +
          g->SFA.buffer->name + "' has " + std::to_string(na) + ") and " + std::to_string(Wb * N / 32) +
          " for B ('" + g->SFB.buffer->name + "' has " + std::to_string(nb) +
          "): one 32-bit column a 32 rows or columns");
    sfa_addr = Simplify(TmemBase(g->SFA.buffer) + Cast(DataType::UInt(32), ca));
    sfb_addr = Simplify(TmemBase(g->SFB.buffer) + Cast(DataType::UInt(32), cb));
  }
  const std::string cg = pair ? "_cg2" : "";
  Var kk = MakeVar("kk");
  const Expr k0 = Expr(kk) * C(ks);
  Expr dA = a_tmem ? Simplify(TmemBase(g->A.buffer) + Cast(DataType::UInt(32), a_col + Expr(kk) * C(ks / 2)))
            : a_mn ? OperandDescriptor(L, g->A, oa, k0, C(0), da, false, eb, "tl.tcgen05_desc", mode(da))
                   : OperandDescriptor(L, g->A, oa, C(0), k0, da, false, eb, "tl.tcgen05_desc", mode(da));
  Expr dB = b_mn ? OperandDescriptor(L, g->B, ob, k0, C(0), db, false, eb, "tl.tcgen05_desc", mode(db))
                 : OperandDescriptor(L, g->B, ob, C(0), k0, db, false, eb, "tl.tcgen05_desc", mode(db));
  Expr clear = L.VisitExpr(g->clear_accum);
  Expr enable = Cast(DataType::Int(32), Binary(BinaryOp::kOr, Binary(BinaryOp::kNE, kk, C(0)),
                                               Binary(BinaryOp::kEQ, clear, IntImm(DataType::Bool(), 0))));
  std::vector<Expr> margs{Simplify(TmemBase(g->C.buffer) + Cast(DataType::UInt(32), c_col)), dA, dB,
                          U32(idesc), Simplify(enable)};
  if (scaled) {
    Expr kvs = L.VisitExpr(g->k_start) + Expr(kk) * C(kv);  // the step's first K value
    auto group = [&](int64_t gran, int64_t w) {
      return w == 1 ? U32(0) : Cast(DataType::UInt(32), Mod(Div(kvs, 4 * gran), w));
    };
    if (!nvf4) {  // the byte of each scale word this step takes: K group (k_start + kv kk) / granularity
      // (kind::mxf4: 0 or 2, the half-word of the step's two groups)
      auto id = [&](int64_t gran) { return Cast(DataType::UInt(32), Mod(Div(kvs, gran), 4)); };
      margs[3] = Simplify(U32(idesc) + id(g->gran_b) * U32(16) + id(g->gran_a) * U32(int64_t{1} << 29));
    }  // (NVFP4: scale ids 0, the whole word)
    margs.push_back(Simplify(sfa_addr + group(g->gran_a, Wa) * U32(M / 32)));
    margs.push_back(Simplify(sfb_addr + group(g->gran_b, Wb) * U32(N / 32)));
  }
  std::vector<Stmt> issue{
      Call0("tl.tcgen05_fence_after_thread_sync", {}, sp),
      For(kk, C(0), C(K / ks), ForKind::kUnrolled,
          Call0("tl.tcgen05_mma_" + std::string(a_tmem ? "ts_" : "") + kind + cg, margs, sp), {}, sp)};
  if (g->mbar) issue.push_back(Commit(L, g->mbar, pair, sp));
  auto sw = [&](const std::vector<int64_t>& s) { return std::to_string(HopperSwizzleBytes(s[0], s[1], eb)); };
  auto f8name = [](DataType t, int padded) {
    return std::string(padded == 5                               ? "e2m1"
                       : padded == 3                             ? "e2m3"
                       : padded == 4                             ? "e3m2"
                       : t.code() == DataType::Code::kFloat8E4M3 ? "e4m3"
                                                                 : "e5m2");
  };
  L.ctx_.info->choices.push_back(
      Loc(sp) + ": T." + (scaled ? "tcgen05_gemm_blockscaled" : "tcgen05_gemm") +
      ": tcgen05.mma.cta_group::" + (pair ? "2" : "1") + ".kind::" + kind +
      (nvf4     ? ".block_scale.block16"
       : mxf4   ? ".block_scale.scale_vec::2X"
       : scaled ? ".block_scale.scale_vec::1X"
                : "") +
      " " + std::to_string(MM) + "x" + std::to_string(N) + "x" + std::to_string(two ? 2 * ks : ks) + " " +
      (two      ? std::string("e2m1_e2m1 (two values a byte)")
       : g->fp4 ? f8name(g->A.buffer->dtype, g->PaddedType(false)) + "_" +
                      f8name(g->B.buffer->dtype, g->PaddedType(true)) +
                      " (fp4 / fp6: 16 values in the first 8 / 12 bytes of each 16 shared bytes)"
       : tf32 ? std::string("tf32_tf32 (float32 operands, read as tf32: the top 19 bits of each)")
              : MmaAbName(g->A.buffer->dtype, g->B.buffer->dtype, true)) +
      ", " + std::to_string(K / ks) + " instruction(s) by one thread into tensor memory '" +
      g->C.buffer->name + "'; A " +
      (a_tmem ? std::string("in tensor memory '") + g->A.buffer->name + "' (16-bit pairs)"
              : std::string(a_mn ? "MN" : "K") + "-major (swizzle " + sw(as) + "B)") +
      ", B " + (b_mn ? "MN" : "K") + "-major (swizzle " + sw(bs) + "B)" +
      (g->mbar ? pair ? "; completion arrives on the mbarrier in both blocks of the pair"
                      : "; completion arrives on the mbarrier"
               : "; no commit") +
      (nvf4 ? "; UE4M3 scales from tensor memory '" + g->SFA.buffer->name + "' and '" + g->SFB.buffer->name +
                  "', a word (4 x 16 values) a row or column at step s, word group ((k_start + 64 s) / 64) "
                  "% " +
                  std::to_string(Wa)
       : mxf4 ? "; E8M0 scales from tensor memory '" + g->SFA.buffer->name + "' and '" + g->SFB.buffer->name +
                    "', at step s the half-word at byte (k_start + 64 s) / 32 % 4 of each word (its two "
                    "32-value groups), word group ((k_start + 64 s) / 128) % " +
                    std::to_string(Wa)
       : scaled
           ? "; E8M0 scales from tensor memory '" + g->SFA.buffer->name + "' and '" + g->SFB.buffer->name +
                 "', byte ((k_start + 32 s) / " + std::to_string(g->gran_a) +
                 ") % 4 of A's, ((k_start + 32 s) / " + std::to_string(g->gran_b) + ") % 4 of B's at step s" +
                 (Wa > 1 || Wb > 1
                      ? ", of word group ((k_start + 32 s) / " + std::to_string(4 * g->gran_a) + ") % " +
                            std::to_string(Wa) + " of A's, ((k_start + 32 s) / " +
                            std::to_string(4 * g->gran_b) + ") % " + std::to_string(Wb) + " of B's"
                      : std::string())
           : "") +
      (in_branch ? "; issued by thread " + std::to_string(L.ws_leader_ + L.region_.lo) + " of its branch"
                 : "") +
      (pair ? " of the pair's even block (each block: A 128 rows, B " + std::to_string(N / 2) +
                  " columns, C 128 rows in its own tensor memory)"
            : ""));
  // The operands' generic-proxy writes (st.shared, cp.async) are fenced by their writers before the barrier
  // that precedes the issue: tcgen05.mma reads shared memory through the async proxy. The mark becomes
  // fence.proxy.async where such writes reach the operands, nothing where only TMA writes them
  // (ElideWgmmaProxyFences, once shared memory is planned).
  std::vector<Stmt> out;
  if (!L.ctx_.opt.skip_fence_proxy)
    out.push_back(Call0(in_branch ? "tl.wgmma_operand_fence_branch" : "tl.wgmma_operand_fence",
                        {Load(L.MapBuffer(a_tmem ? g->B.buffer : g->A.buffer), {C(0)}),
                         Load(L.MapBuffer(g->B.buffer), {C(0)})},
                        sp));
  if (!in_branch)
    for (Stmt st : {Call0("tl.tcgen05_fence_before_thread_sync", {}, sp), Call0("tl.syncthreads", {}, sp)})
      out.push_back(st);
  out.push_back(PairLeader(L.GuardOne(Seq(issue, sp), sp), pair, sp));
  return Seq(out, sp);
}

// T.tcgen05_mma_arrive(mbar): tcgen05.commit by the thread that issues single-thread work here.
Stmt LowerTcgen05MmaArrive(GpuTileLowerer& L, const Tcgen05MmaArriveNode* n) {
  NeedTcgen05(L, "T.tcgen05_mma_arrive", n->span);
  if (L.thread_conditions_ > 0 && !L.leader_in_branch_)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.tcgen05_mma_arrive in a branch on the thread index whose threads are not a known range: no "
        "thread of it can be named to commit; branch on a range (`elif tx < 64:`)",
        n->span);
  return PairLeader(L.GuardOne(Commit(L, n->mbar, n->arrive_2cta, n->span), n->span), n->arrive_2cta,
                    n->span);
}

// The first element of a shared region (its flat index in the buffer's layout) and its word count.
std::pair<Expr, int64_t> SharedStart(GpuTileLowerer& L, const Region& r) {
  std::vector<Expr> at;
  int64_t n = 1;
  for (const Range& x : r.ranges) {
    at.push_back(L.VisitExpr(x.min));
    int64_t e = 0;
    AsConstInt(x.extent, &e);
    n *= e;
  }
  return {L.SharedIndex(r.buffer, at), n};
}

// T.tcgen05_cp_warpx4(smem, tmem, col, use_2cta=): one thread issues a tcgen05.cp.32x128b.warpx4 a 128-word
// chunk (shared descriptor without swizzle: row r of the chunk, 16 bytes, at start + r * 16: SBO 128 bytes a
// core matrix of 8 rows, no LBO: one 16-byte column of core matrices), each into the next 4 columns.
Stmt LowerTcgen05Cp(GpuTileLowerer& L, const Tcgen05CpNode* n) {
  const Span sp = n->span;
  NeedTcgen05(L, "T.tcgen05_cp_warpx4", sp);
  if (L.thread_conditions_ > 0 && !L.leader_in_branch_)
    throw UserError(
        ErrorKind::kUnsupported,
        "T.tcgen05_cp_warpx4 in a branch on the thread index whose threads are not a known range: no "
        "thread of it can be named to issue; branch on a range (`elif tx < 64:`)",
        sp);
  auto [start, words] = SharedStart(L, n->src);
  const int64_t chunks = words / 128;
  int64_t ncols = 0;
  const Expr col0 = TmemRegionColumn(L, n->dst, &ncols, "T.tcgen05_cp_warpx4's destination", sp);
  int64_t off = 0;
  if (AsConstInt(n->col, &off) && (off < 0 || off + 4 * chunks > ncols))
    throw UserError(ErrorKind::kUnsupported,
                    "T.tcgen05_cp_warpx4: " + std::to_string(chunks) +
                        " chunk(s) of 128 words fill columns [" + std::to_string(off) + ", " +
                        std::to_string(off + 4 * chunks) + ") of '" + n->dst.buffer->name + "', which has " +
                        std::to_string(ncols),
                    sp);
  Buffer sb = L.MapBuffer(n->src.buffer);
  std::vector<Stmt> cps;
  for (int64_t i = 0; i < chunks; ++i) {
    Expr desc = Call(DataType::UInt(64), "tl.tcgen05_desc",
                     {Load(sb, {Simplify(start + C(128 * i))}), C(0), C(128), C(0)});
    Expr taddr =
        Simplify(TmemBase(n->dst.buffer) + Cast(DataType::UInt(32), col0 + L.VisitExpr(n->col) + C(4 * i)));
    cps.push_back(
        Call0(std::string("tl.tcgen05_cp_warpx4") + (n->use_2cta ? "_cg2" : ""), {taddr, desc}, sp));
  }
  L.ctx_.info->choices.push_back(Loc(sp) + ": T.tcgen05_cp_warpx4 " + n->src.buffer->name + " -> " +
                                 n->dst.buffer->name + ": " + std::to_string(chunks) +
                                 " tcgen05.cp.cta_group::" + (n->use_2cta ? "2" : "1") +
                                 ".32x128b.warpx4 by one thread" +
                                 (n->use_2cta ? " of the pair's even block (each block its own copy)" : ""));
  return PairLeader(L.GuardOne(Seq(cps, sp), sp), n->use_2cta, sp);
}

// T.tcgen05_sf_warp_transpose(smem): each 128-word chunk by one warp (tl.tcgen05_sf_warp_transpose: its lanes
// read, meet at a warp barrier, write). Inside a branch on the thread index of one warp (TileLang's kernels);
// elsewhere warp 0 does it.
Stmt LowerTcgen05SfTranspose(GpuTileLowerer& L, const Tcgen05SfTransposeNode* n) {
  const Span sp = n->span;
  NeedTcgen05(L, "T.tcgen05_sf_warp_transpose", sp);
  auto [start, words] = SharedStart(L, n->region);
  Buffer sb = L.MapBuffer(n->region.buffer);
  std::vector<Stmt> out;
  for (int64_t i = 0; i < words / 128; ++i)
    out.push_back(Call0("tl.tcgen05_sf_warp_transpose", {Load(sb, {Simplify(start + C(128 * i))})}, sp));
  Stmt body = Seq(out, sp);
  if (L.thread_conditions_ > 0) {
    if (!L.leader_in_branch_)
      throw UserError(
          ErrorKind::kUnsupported,
          "T.tcgen05_sf_warp_transpose in a branch on the thread index whose threads are not a known "
          "range: the branch must be one warp (`elif tx < 96:` after `elif tx < 64:`)",
          sp);
    return body;  // the branch's warp
  }
  return If(Binary(BinaryOp::kLT, L.tx_kernel_, C(32)), body, nullptr, sp);
}

// T.tma_copy on CUDA. Into a T.alloc_cluster_barrier barrier it is TileLang's 2-CTA load (the tcgen05
// family): the pair's even block arms its barrier with both blocks' bytes, and each block's copy completes on
// that barrier (cp.async.bulk.tensor .cta_group::2, its mbarrier operand mapped to the even block:
// tl.tma_load_2sm).
Stmt LowerTmaCopyCUDA(GpuTileLowerer& L, const TmaCopyNode& t) {
  if (!t.cluster_barrier) return L.TmaCopyProducer(t, "tl.tma_load", nullptr, 1);
  NeedTcgen05(L,
              "T.tma_copy into a T.alloc_cluster_barrier barrier (TileLang's 2-CTA load: both blocks of a "
              "CTA pair complete the even block's barrier)",
              t.span);
  L.ctx_.info->choices.push_back(
      Loc(t.span) + ": T.tma_copy " + t.src.buffer->name + " -> " + t.dst.buffer->name +
      ": 2-CTA load (cp.async.bulk.tensor.cta_group::2): completes on the barrier of "
      "the pair's even block, which expects both blocks' bytes");
  return L.TmaCopyProducer(t, "tl.tma_load_2sm", Eq(Mod(Rank(), 2), C(0)), 2);
}

// T.tma_gather4 / T.tma_scatter4 (the tcgen05 family): one tile::gather4 / tile::scatter4 copy by each thread
// that reaches it, over a tensor map of the 2-d tensor whose box is one row of K values (no swizzle: the [4,
// K] tile is row-major), the column and the four rows as the instruction's coordinates:
//   tl.tma_load_gather4(&tile[0, 0], &bar, map, col, r0, r1, r2, r3)
//   tl.tma_store_scatter4(&tile[0, 0], map, col, r0, r1, r2, r3)
Stmt LowerTma4(GpuTileLowerer& L, const Tma4Node& t) {
  const std::string what = t.scatter ? "T.tma_scatter4" : "T.tma_gather4";
  NeedTcgen05(L, what + " (TMA tile::" + (t.scatter ? "scatter4" : "gather4") + ")", t.span);
  int64_t k = 0;
  AsConstInt(t.tile.buffer->shape[1], &k);
  const Buffer& g = t.global.buffer;
  Expr map = Call(DataType::Handle(), "tl.tensor_map",
                  {Load(g, {C(0), C(0)}), Call(DataType::Handle(), "list", {C(1), C(k)}), C(0)});
  L.tma_align_[L.MapBuffer(t.tile.buffer).get()] =
      std::max<int64_t>(L.tma_align_[L.MapBuffer(t.tile.buffer).get()], 128);
  Expr tile = Load(L.MapBuffer(t.tile.buffer), {L.SharedIndex(t.tile.buffer, {C(0), C(0)})});
  std::vector<Expr> args{tile};
  if (!t.scatter) args.push_back(L.VisitExpr(t.barrier));
  args.push_back(map);
  args.push_back(L.VisitExpr(t.col));
  for (const Expr& r : t.rows) args.push_back(L.VisitExpr(r));
  L.ctx_.info->choices.push_back(
      Loc(t.span) + ": " + what + " " +
      (t.scatter ? t.tile.buffer->name + " -> " + g->name : g->name + " -> " + t.tile.buffer->name) +
      ": cp.async.bulk.tensor.2d tile::" + (t.scatter ? "scatter4" : "gather4") + ", four rows of " +
      std::to_string(k) + " values (" + std::to_string(4 * k * t.tile.buffer->dtype.bits() / 8) +
      " bytes), by every thread that reaches it");
  return Call0(t.scatter ? "tl.tma_store_scatter4" : "tl.tma_load_gather4", args, t.span);
}

// T.copy between tensor memory and a fragment in the tmem_rows layout: tcgen05.ld (into the fragment) or
// tcgen05.st (out of it; 16-bit values packed two a 32-bit column, the lower column first), shape .32x32b;
// an M = 64 accumulator (tmem_rows64) with tcgen05.ld .16x32bx2. A float16 accumulator (one value a column)
// loads into 16-bit registers from the columns' lower halves.
Stmt LowerTmemCopy(GpuTileLowerer& L, const CopyNode* c) {
  const Span sp = c->span;
  const bool load = c->src.buffer->scope == Scope::kTensorMemory;
  const Region& tm = load ? c->src : c->dst;
  const Buffer& frag = load ? c->dst.buffer : c->src.buffer;
  NeedTcgen05(L, load ? "T.copy from tensor memory" : "T.copy into tensor memory", sp);
  const Fragment& F = L.Layout(frag.get());
  const bool m64 = F.kind == "tmem_rows64";
  TL_ICHECK(F.kind == "tmem_rows" || m64, "the fragment '", frag->name,
            "' copied to or from tensor memory has layout ", F.desc);
  const int64_t N = F.params[1], G = F.params[2], per = N / G;
  int64_t ncols = 0;
  const Expr c_col = TmemRegionColumn(L, tm, &ncols, "T.copy", sp);
  TL_ICHECK(ncols == N, "the tensor memory copy's columns differ from its fragment's layout");
  const bool unpacked = Unpacked(L, tm.buffer);
  const int64_t pc = TmemPerColumn(tm.buffer, unpacked);  // values a 32-bit column
  auto refuse = [&](const std::string& m) { throw UserError(ErrorKind::kUnsupported, m, sp); };
  if (pc == 2 && (load || frag->dtype.bits() != 16))
    refuse("T.copy of 16-bit tensor memory '" + tm.buffer->name +
           "' goes from a 16-bit fragment into it (tcgen05.st of packed pairs); reading it back is not "
           "implemented");
  if (m64 && pc == 2)
    refuse("T.copy of 16-bit tensor memory '" + tm.buffer->name +
           "' [64, N] packed two values a column (an MMA operand A) is not implemented; M = 64 takes A from "
           "shared "
           "memory");
  if (unpacked && frag->dtype != tm.buffer->dtype)
    refuse("T.copy between the float16 accumulator '" + tm.buffer->name + "' and a " + frag->dtype.str() +
           " fragment: copy through a fragment of the accumulator's dtype");
  if (!unpacked && pc == 1 && frag->dtype.bits() != 32)
    refuse("T.copy between 32-bit tensor memory '" + tm.buffer->name + "' and a " + frag->dtype.str() +
           " fragment: tcgen05.ld / st move 32-bit values; copy through a fragment of the tensor memory's "
           "dtype");
  Buffer regs = L.MapBuffer(frag);
  // lane field: the warp's quarter of the 128 lanes; column: its column group's first column
  // (the block's warp number: inside a region tx_ counts from the region's first thread)
  Expr lane =
      Binary(BinaryOp::kShl, Cast(DataType::UInt(32), Mod(Div(L.tx_kernel_, 32), 4) * C(32)), U32(16));
  Expr col = Cast(DataType::UInt(32), Div(L.tx_, 128) * C(per / pc));
  Expr base = Simplify(TmemBase(tm.buffer) + Cast(DataType::UInt(32), c_col) + lane + col);
  std::vector<Stmt> out;
  if (load) out.push_back(Call0("tl.tcgen05_fence_after_thread_sync", {}, sp));
  // .x1 .. .x128: chunks of at most 128 32-bit columns, each a power of 2 (.16x32bx2: the lane halves each
  // half of the group's columns, the second half at immHalfSplitoff = per / 2)
  const int64_t cols = m64 ? per / 2 : per / pc;
  const std::string shape = m64 ? "_16x32bx2" : "";
  const std::string op =
      pc == 2 ? "tl.tcgen05_st_packed16"
              : std::string(load ? "tl.tcgen05_ld" : "tl.tcgen05_st") + shape + (unpacked ? "_lo16" : "");
  for (int64_t off = 0; off < cols;) {
    int64_t n = 128;
    while (n > cols - off) n /= 2;
    Expr r = Load(regs, {C(off * pc)}), a = Simplify(base + U32(off));
    std::vector<Expr> args = load ? std::vector<Expr>{r, a, C(n)} : std::vector<Expr>{a, r, C(n)};
    if (m64) args.push_back(C(per / 2));
    out.push_back(Call0(op, args, sp));
    off += n;
  }
  // a store completes (wait::st) before the threads' barrier that orders it before an MMA reading it
  out.push_back(Call0(load ? "tl.tcgen05_wait_ld" : "tl.tcgen05_wait_st", {}, sp));
  if (!load) out.push_back(Call0("tl.tcgen05_fence_before_thread_sync", {}, sp));
  L.ctx_.info->choices.push_back(Loc(sp) + ": T.copy " + c->src.buffer->name + " -> " + c->dst.buffer->name +
                                 ": tcgen05." + (load ? "ld" : "st") + (m64 ? ".16x32bx2" : ".32x32b") + ", " +
                                 std::to_string(cols) + " 32-bit columns per thread" +
                                 (pc == 2 ? " (16-bit values packed in pairs)" : "") +
                                 (unpacked ? " (float16 values, bits 0-15 of each)" : "") + " (" + F.desc + ")");
  return Seq(out, sp);
}

const GpuOpLoweringRegistrar kTcgen05Gemm(
    "tcgen05_gemm",
    [](GpuTileLowerer& L, const TileOpNode& n) { return LowerTcgen05Gemm(L, static_cast<const Tcgen05GemmNode*>(&n)); },
    "cuda");
const GpuOpLoweringRegistrar kTcgen05Cp(
    "tcgen05_cp_warpx4",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      return LowerTcgen05Cp(L, static_cast<const Tcgen05CpNode*>(&n));
    },
    "cuda");
const GpuOpLoweringRegistrar kTcgen05SfTranspose(
    "tcgen05_sf_warp_transpose",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      return LowerTcgen05SfTranspose(L, static_cast<const Tcgen05SfTransposeNode*>(&n));
    },
    "cuda");
const GpuOpLoweringRegistrar kTcgen05MmaArrive(
    "tcgen05_mma_arrive",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      return LowerTcgen05MmaArrive(L, static_cast<const Tcgen05MmaArriveNode*>(&n));
    },
    "cuda");
const GpuOpLoweringRegistrar kTmaCopyCUDA(
    "tma_copy",
    [](GpuTileLowerer& L, const TileOpNode& n) {
      return LowerTmaCopyCUDA(L, static_cast<const TmaCopyNode&>(n));
    },
    "cuda");
const GpuOpLoweringRegistrar kTmaGather4(
    "tma_gather4",
    [](GpuTileLowerer& L, const TileOpNode& n) { return LowerTma4(L, static_cast<const Tma4Node&>(n)); },
    "cuda");
const GpuOpLoweringRegistrar kTmaScatter4(
    "tma_scatter4",
    [](GpuTileLowerer& L, const TileOpNode& n) { return LowerTma4(L, static_cast<const Tma4Node&>(n)); },
    "cuda");
const GpuOpLoweringRegistrar kTmemCopy(
    "copy", [](GpuTileLowerer& L, const TileOpNode& n) { return LowerTmemCopy(L, static_cast<const CopyNode*>(&n)); },
    "cuda");

}  // namespace
}  // namespace gpu_lowering

PrimFunc LowerTensorMemoryCUDA(const PrimFunc& f, const PassContext& ctx) {
  const KernelNode* k = FindKernel(f->body);
  if (!k) return f;
  std::map<const BufferNode*, int64_t> col;  // first column of each buffer
  int64_t total = 0;
  std::string table;
  // 16-bit tensor memory holding one value a column (a float16 D; other 16-bit tensor memory packs two): the
  // tile lowerer's tl.tmem_unpacked attributes (from the ops, TileOpNode::UnpackedTensorMemory)
  std::set<const BufferNode*> unpacked;
  PostOrderVisitStmt(k->body, [&](const Stmt& x) {
    if (auto* a = As<AttrStmtNode>(x); a && a->key == "tl.tmem_unpacked" && a->node)
      unpacked.insert(a->node.get());
  });
  for (const Buffer& b : k->alloc_buffers)
    if (b->scope == Scope::kTensorMemory) {
      const int64_t n = TmemColumns(b, unpacked.count(b.get()) > 0, b->span);
      col[b.get()] = total;
      table += "  " + b->name + ": columns [" + std::to_string(total) + ", " + std::to_string(total + n) + ")\n";
      total += n;
    }
  if (col.empty()) return f;
  int64_t alloc = 32;
  while (alloc < total) alloc *= 2;
  if (alloc > 512)
    throw UserError(ErrorKind::kResource,
                    "the kernel's tensor memory needs " + std::to_string(total) +
                        " columns, over the 512 of the tcgen05 family:\n" + table,
                    k->span);
  // Every tcgen05 instruction of a kernel names the same CTA group (PTX ISA): with a 2-CTA MMA the allocation
  // is cta_group::2 too, and the pair meets at a cluster barrier before it frees tensor memory (the even
  // block's MMAs write the odd block's; neither may free or exit while the other's may still be reached).
  struct Groups : IRVisitor {
    int64_t one = 0, two = 0;
    Span first_two;
    void VisitCall(const CallNode* n) override {
      if (n->op.rfind("tl.tcgen05_mma_", 0) == 0 || n->op.rfind("tl.tcgen05_commit", 0) == 0 ||
          n->op.rfind("tl.tcgen05_cp_", 0) == 0) {
        const bool cg2 = n->op.size() > 4 && n->op.compare(n->op.size() - 4, 4, "_cg2") == 0;
        ++(cg2 ? two : one);
      }
      IRVisitor::VisitCall(n);
    }
  } groups;
  groups.VisitStmt(k->body);
  const bool pair = groups.two > 0;
  if (pair && groups.one)
    throw UserError(
        ErrorKind::kUnsupported,
        "the kernel mixes 2-CTA tcgen05 (use_2cta / arrive_2cta) with one-block tcgen05 MMAs or commits; "
        "every tcgen05 instruction of a kernel must name the same CTA group (PTX ISA): make them all "
        "2-CTA, or none",
        k->span);
  if (pair) {
    const std::array<int64_t, 3> cd = ClusterDims(f->body);
    if ((cd[0] * cd[1] * cd[2]) % 2)
      throw UserError(
          ErrorKind::kUnsupported,
          "2-CTA tcgen05 (T.tcgen05_gemm(..., use_2cta=True)) runs on CTA pairs (cluster ranks 2i, 2i + "
          "1): it needs a T.ClusterKernel of an even number of blocks (cluster_dims=2 or (1, 2, 1)); this "
          "kernel's cluster is " +
              std::to_string(cd[0]) + " x " + std::to_string(cd[1]) + " x " + std::to_string(cd[2]),
          k->span);
  }
  Buffer slot = MakeBuffer("tmem_addr", DataType::UInt(32), {C(1)}, Scope::kShared, k->span);
  struct Rewrite : IRMutator {
    std::map<const BufferNode*, int64_t>* col;
    Buffer slot;
    Expr VisitCall(const Expr& e, const CallNode* n) override {
      if (n->op == "tl.tmem_base") {
        auto* l = As<BufferLoadNode>(n->args.at(0));
        TL_ICHECK(l && col->count(l->buffer.get()), "tl.tmem_base of a buffer that is not tensor memory");
        return Load(slot, {C(0)}) + U32(col->at(l->buffer.get()));
      }
      return IRMutator::VisitCall(e, n);
    }
    Stmt VisitAttr(const Stmt& s, const AttrStmtNode* n) override {
      if (n->key == "tl.tmem_unpacked") return VisitStmt(n->body);  // read above
      return IRMutator::VisitAttr(s, n);
    }
    Stmt VisitKernel(const Stmt& s, const KernelNode* n) override {
      Stmt r = IRMutator::VisitKernel(s, n);
      auto* kn = As<KernelNode>(r);
      std::vector<Buffer> allocs{slot};
      for (const Buffer& b : kn->alloc_buffers)
        if (b->scope != Scope::kTensorMemory) allocs.push_back(b);
      const Span sp = kn->span;
      Expr warp0 = Binary(BinaryOp::kLT, Call(DataType::Int(32), "tl.thread_idx", {}), C(32));
      const std::string cg = pair ? "_cg2" : "";
      Stmt body =
          Seq({If(warp0,
                  Seq({Call0("tl.tcgen05_alloc" + cg, {Load(slot, {C(0)}), C(cols)}, sp),
                       Call0("tl.tcgen05_relinquish_alloc_permit" + cg, {}, sp)},
                      sp),
                  nullptr, sp),
               Call0("tl.tcgen05_fence_before_thread_sync", {}, sp), Call0("tl.syncthreads", {}, sp),
               Call0("tl.tcgen05_fence_after_thread_sync", {}, sp), kn->body,
               Call0("tl.tcgen05_fence_before_thread_sync", {}, sp),
               Call0(pair ? "tl.cluster_sync" : "tl.syncthreads", {}, sp),
               If(warp0, Call0("tl.tcgen05_dealloc" + cg, {Load(slot, {C(0)}), C(cols)}, sp), nullptr, sp)},
              sp);
      return std::make_shared<KernelNode>(kn->grid, kn->block_vars, kn->threads, allocs, kn->var_inits, body, sp);
    }
    int64_t cols = 0;
    bool pair = false;
  } rw;
  rw.pair = pair;
  rw.col = &col;
  rw.slot = slot;
  rw.cols = alloc;
  ctx.info->choices.push_back(Loc(k->span) + ": tensor memory: " + std::to_string(alloc) +
                              " columns allocated by warp 0 (tcgen05.alloc" +
                              (pair ? ".cta_group::2, in each block of the pair" : "") +
                              ") at the start and freed at the end" +
                              (pair ? " after a cluster barrier" : "") + ":\n" + table);
  return WithBody(f, rw.VisitStmt(f->body));
}

}  // namespace tl
