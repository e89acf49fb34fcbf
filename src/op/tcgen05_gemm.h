// T.tcgen05_gemm (TileLang's explicit Blackwell gemm): C (tensor memory, T.alloc_tmem) = A @ B (+ C), A and B
// shared tiles, issued by one thread as tcgen05.mma and asynchronous; `mbar` (an mbarrier element, or none)
// receives one arrival when it completes. Lowered on the tcgen05 family only
// (src/target/cuda/lower_tcgen05.cc).
#pragma once
#include "ir/stmt.h"

namespace tl {

struct Tcgen05GemmNode : TileOpNode {
  static constexpr const char kOp[] = "tcgen05_gemm";
  bool SelfContained() const override { return true; }
  Tcgen05GemmNode(Region a, Region b, Region c, bool ta, bool tb, Expr mbar, Expr clear, bool two_cta, Span s,
                  Region sfa = {}, Region sfb = {}, Expr k_start = nullptr, int gran_a = 0, int gran_b = 0,
                  bool wait = false, int fp4 = 0)
      : TileOpNode(kOp, std::move(s)),
        A(std::move(a)),
        B(std::move(b)),
        C(std::move(c)),
        trans_A(ta),
        trans_B(tb),
        mbar(std::move(mbar)),
        clear_accum(std::move(clear)),
        use_2cta(two_cta),
        SFA(std::move(sfa)),
        SFB(std::move(sfb)),
        k_start(std::move(k_start)),
        gran_a(gran_a),
        gran_b(gran_b),
        wait(wait),
        fp4(fp4) {}
  const Region A, B, C;
  const bool trans_A, trans_B;
  const Expr mbar;         // the mbarrier element the commit arrives on; null: no commit
  const Expr clear_accum;  // bool: overwrite C instead of accumulating (a kernel expression, e.g. k == 0)
  // cta_group::2: a CTA pair computes a 256 x N tile (each block 128 rows of A and C, N / 2 columns of B);
  // the pair's even block issues
  const bool use_2cta;
  // T.tcgen05_gemm_blockscaled (kind::mxf8f6f4.block_scale): the uint32 tensor memory of A's and B's E8M0
  // scales (T.tcgen05_cp_warpx4's layout: the scale of row r at lane r % 32, column r / 32, byte i of a word
  // for K group 4 g + i), the tile's first K index and the K elements a scale covers. SFA.buffer null: not
  // block-scaled.
  const Region SFA, SFB;
  const Expr k_start;
  const int gran_a, gran_b;
  // T.gemm into tensor memory (TileLang's form without an mbarrier): complete when the statement ends. The CUDA
  // backend gives it a barrier of its own and waits on it (GemmToTcgen05CUDA).
  const bool wait;
  // Operands that are float4_e2m1fn stored as the tensor cores read sub-byte values of kind::f8f6f4 /
  // kind::mxf8f6f4 from shared memory (bit 0: A, bit 1: B): uint8 tiles [rows, K] of 16-byte groups, each the
  // 16 values of its K range two a byte (the first in the low nibble) in its first 8 bytes, the other 8
  // unused (the TMA format 16U4_ALIGN16B; TileLang's float4_e2m1_unpacked tiles). Set by PadFp4TilesCUDA.
  // Bits 2 (A) and 3 (B): float4_e2m1fn stored two values a byte, uint8 [rows, K / 2], as kind::mxf4nvf4
  // reads it (NVFP4: UE4M3 scales per 16 values); set by PackNvf4TilesCUDA.
  // Bits 4 / 5 (A / B, E2M3) and 6 / 7 (E3M2): fp6 in the padded form, 16 values in the first 12 bytes of
  // each 16 (four in 3 bytes, the first in the lowest bits; the TMA format 16U6_ALIGN16B).
  const int fp4;
  bool Fp4A() const { return fp4 & 1; }
  bool Fp4B() const { return fp4 & 2; }
  /// The operand's kind::f8f6f4 type in the padded form (E2M1 5, E2M3 3, E3M2 4), 0 if it is not so stored.
  int PaddedType(bool b) const {
    return fp4 & (b ? 2 : 1) ? 5 : fp4 & (b ? 32 : 16) ? 3 : fp4 & (b ? 128 : 64) ? 4 : 0;
  }
  bool PackedA() const { return fp4 & 4; }
  bool PackedB() const { return fp4 & 8; }
  // NVFP4: kind::mxf4nvf4.block_scale.block16 (granularity 16, UE4M3 scales)
  bool Nvf4() const { return SFA.buffer != nullptr && gran_a == 16; }
  // MXFP4 with an E8M0 scale per 32 values of fp4 A and B: kind::mxf4.block_scale.scale_vec::2X where both
  // operands are stored two values a byte (PackNvf4TilesCUDA; PackedA / PackedB), otherwise kind::mxf8f6f4
  // in the padded form. (2X reads a k64 step's two scales as a half-word of each scale word, so only a
  // granularity of 32 lays them out as it reads them.)
  bool Mxf4() const {
    auto fp4 = [](const Region& r, bool packed) {
      return packed || r.buffer->dtype.code() == DataType::Code::kFloat4E2M1;
    };
    return SFA.buffer != nullptr && gran_a == 32 && gran_b == 32 && fp4(A, PackedA()) && fp4(B, PackedB());
  }
  bool scaled() const { return SFA.buffer != nullptr; }

  std::vector<const Region*> UnpackedTensorMemory() const override {
    if (C.buffer->dtype.bits() == 16) return {&C};
    return {};
  }
  std::vector<std::pair<const Region*, Access>> Regions() const override {
    std::vector<std::pair<const Region*, Access>> r{
        {&A, Access::kRead}, {&B, Access::kRead}, {&C, Access::kReadWrite}};
    if (scaled()) r.insert(r.end(), {{&SFA, Access::kRead}, {&SFB, Access::kRead}});
    return r;
  }
  std::vector<Expr> Exprs() const override {
    std::vector<Expr> e{clear_accum};
    if (scaled()) e.push_back(k_start);
    if (mbar) e.push_back(mbar);
    return e;
  }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override {
    return {trans_A, trans_B, mbar != nullptr, use_2cta, scaled(), gran_a, gran_b, wait, fp4};
  }
  TileOpCall Call() const override;
  void Check() const override;
};

/// T.tcgen05_mma_arrive(mbar): one thread (the one that issues single-thread work where the call stands: the
/// first of its branch's threads) commits its earlier tcgen05.mma to the mbarrier, which receives one arrival
/// when they complete (tcgen05.commit). TileLang's warp-specialised Blackwell kernels signal the epilogue
/// with it. arrive_2cta: the commit of 2-CTA MMAs, by the pair's even block, arriving in both blocks.
struct Tcgen05MmaArriveNode : TileOpNode {
  static constexpr const char kOp[] = "tcgen05_mma_arrive";
  bool SelfContained() const override { return true; }
  Tcgen05MmaArriveNode(Expr mbar, bool two_cta, Span s)
      : TileOpNode(kOp, std::move(s)), mbar(std::move(mbar)), arrive_2cta(two_cta) {}
  const Expr mbar;
  const bool arrive_2cta;
  std::vector<int64_t> Attrs() const override { return {arrive_2cta}; }
  std::vector<std::pair<const Region*, Access>> Regions() const override { return {}; }
  std::vector<Expr> Exprs() const override { return {mbar}; }
  Stmt WithOperands(std::vector<Region>, std::vector<Expr> exprs) const override {
    return std::make_shared<Tcgen05MmaArriveNode>(exprs.at(0), arrive_2cta, span);
  }
  TileOpCall Call() const override {
    TileOpCall c{"tcgen05_mma_arrive", {{TileOpArg::kExpr, nullptr, mbar}}, {}};
    if (arrive_2cta) c.keywords.emplace_back("arrive_2cta", "True");
    return c;
  }
  void Check() const override;
};

/// T.tcgen05_cp_warpx4(smem, tmem, col_offset, use_2cta=): one thread copies each 128-word chunk i of the
/// uint32 shared tile into 4 columns (col_offset + 4 i ..) of uint32 tensor memory, shared word 4 r + c to
/// lanes r + 32 q (q < 4), column c (tcgen05.cp.32x128b.warpx4); asynchronous, ordered before the thread's
/// later tcgen05.mma.
struct Tcgen05CpNode : TileOpNode {
  static constexpr const char kOp[] = "tcgen05_cp_warpx4";
  bool SelfContained() const override { return true; }
  Tcgen05CpNode(Region src, Region dst, Expr col, bool two_cta, Span s)
      : TileOpNode(kOp, std::move(s)),
        src(std::move(src)),
        dst(std::move(dst)),
        col(std::move(col)),
        use_2cta(two_cta) {}
  const Region src, dst;
  const Expr col;
  const bool use_2cta;
  std::vector<std::pair<const Region*, Access>> Regions() const override {
    return {{&src, Access::kRead}, {&dst, Access::kWrite}};
  }
  std::vector<Expr> Exprs() const override { return {col}; }
  std::vector<int64_t> Attrs() const override { return {use_2cta}; }
  std::vector<const Region*> RowMajorShared() const override { return {&src}; }
  Stmt WithOperands(std::vector<Region> r, std::vector<Expr> e) const override {
    return std::make_shared<Tcgen05CpNode>(std::move(r.at(0)), std::move(r.at(1)), e.at(0), use_2cta, span);
  }
  TileOpCall Call() const override;
  void Check() const override;
};

/// T.tcgen05_sf_warp_transpose(smem): one warp moves word 32 c + r of each 128-word chunk of the uint32
/// shared tile to word 4 r + c (c < 4, r < 32), in place: the order T.tcgen05_cp_warpx4 reads.
struct Tcgen05SfTransposeNode : TileOpNode {
  static constexpr const char kOp[] = "tcgen05_sf_warp_transpose";
  bool SelfContained() const override { return true; }
  Tcgen05SfTransposeNode(Region r, Span s) : TileOpNode(kOp, std::move(s)), region(std::move(r)) {}
  const Region region;
  std::vector<std::pair<const Region*, Access>> Regions() const override {
    return {{&region, Access::kReadWrite}};
  }
  std::vector<const Region*> RowMajorShared() const override { return {&region}; }
  Stmt WithOperands(std::vector<Region> r, std::vector<Expr>) const override {
    return std::make_shared<Tcgen05SfTransposeNode>(std::move(r.at(0)), span);
  }
  TileOpCall Call() const override {
    return {"tcgen05_sf_warp_transpose", {{TileOpArg::kRegion, &region, nullptr}}, {}};
  }
  void Check() const override;
};

}  // namespace tl
