// T.mma_gemm_blockscaled (TileLang's block-scaled gemm): C (+)= (A * sa) @ (B * sb) on tiles, where every
// `sf_a_granularity_k` consecutive K elements of a row of A share one scale from SFA (and likewise B's
// columns from SFB): the microscaling (MX) formats' E8M0 scales, stored as uint8 (2^(s - 127); 255 is NaN).
// The scale of A[m][k] (k within the tile) is SFA[m][j] with j = k / g when SFA holds the tile's K / g
// groups, else j = (k_start + k) / g (SFA spans the whole K). SFB is indexed by B's columns the same way:
// SFB[n][j]. A gemm of its own op name, so that no lowering of T.gemm takes it and drops the scales: lowered
// on AMD CDNA4 (the scaled MFMAs, src/target/hip/lower_gemm_mfma.cc), on sm_120a (mma.sync block_scale,
// src/target/cuda/lower_gemm_blockscaled.cc) and on the CPU (src/transform/cpu/lower_gemm_blockscaled.cc);
// elsewhere it has no lowering and says so.
//
// sf_layout="blockscaled_chunk_kmajor" (NVFP4, TileLang's SM120 form): the scales are UE4M3 bytes, one per
// 16 K elements, four a uint32 word (byte i: the word's i-th group of 16), and a tile of R rows (R a multiple
// of 32) stores its words K-major in chunks: the word w (K elements [64 w, 64 w + 64)) of row m sits at the
// tile's flat word w * R + (m % 32) * (R / 32) + m / 32 (row-major over the tile's [R, columns] extent).
// The same UE4M3 words in a plain row-major [rows, K / 64] tile (sf_layout None / 'rowmajor' with uint32 SFA
// and SFB) are TileLang's other SM120 form. A and B may also be uint8 tiles holding e2m1 codes two a byte
// (PackedFp4), with either kind of scales.
#pragma once
#include "op/gemm.h"

namespace tl {

struct GemmBlockScaledNode : GemmNode {
  static constexpr const char kOp[] = "gemm_blockscaled";
  GemmBlockScaledNode(Region a, Region b, Region c, Region sfa, Region sfb, bool ta, bool tb,
                      GemmWarpPolicy p, bool clear, int gran_a, int gran_b, Expr k_start, Span s,
                      bool chunk_kmajor = false)
      : GemmNode(std::move(a), std::move(b), std::move(c), ta, tb, p, clear, 1, std::move(s), 0, false, kOp),
        SFA(std::move(sfa)),
        SFB(std::move(sfb)),
        gran_a(gran_a),
        gran_b(gran_b),
        k_start(std::move(k_start)),
        chunk_kmajor(chunk_kmajor) {}
  const Region SFA, SFB;
  const int gran_a, gran_b;  // K elements per scale
  const Expr k_start;        // the tile's first K index (int32)
  const bool chunk_kmajor;   // sf_layout="blockscaled_chunk_kmajor": UE4M3 bytes in uint32 words (above)

  /// NVFP4: UE4M3 scales, one per 16 K elements, four a uint32 word: in the chunked order (chunk_kmajor) or
  /// row-major ([rows, words], word w of a row covering K elements [64 w, 64 w + 64)), as TileLang's SM120
  /// forms store them. Otherwise the scales are E8M0 bytes (uint8).
  bool Nvf4Words() const {
    return chunk_kmajor ||
           (SFA.buffer->dtype == DataType::UInt(32) && SFB.buffer->dtype == DataType::UInt(32));
  }
  /// An fp4 (e2m1) operand stored two a byte: a uint8 tile [rows, K / 2] (the low nibble first, K-major), as
  /// PackFp4Tiles makes fp4 tiles on sm_120a (NVFP4: both operands) and gfx950 (MXFP4: either), or a program
  /// writes them; K is twice its last extent.
  bool PackedA() const { return A.buffer->dtype == DataType::UInt(8); }
  bool PackedB() const { return B.buffer->dtype == DataType::UInt(8); }
  /// Both operands so.
  bool PackedFp4() const { return PackedA() && PackedB(); }
  int64_t ValuesPerElement(bool is_b) const override { return (is_b ? PackedB() : PackedA()) ? 2 : 1; }
  /// The column of SFA (is_b: SFB) holding the scale of tile-local K index `k` (row-major uint8 scales).
  Expr ScaleColumn(bool is_b, const Expr& k) const;
  /// Where the scale of row `row` (A's M / B's N, tile-local) and tile-local K index `k` is: the indices of
  /// the SFA (is_b: SFB) element holding it, and the bit offset of its byte there (0 for uint8 scales).
  std::pair<std::vector<Expr>, Expr> ScaleAt(bool is_b, const Expr& row, const Expr& k) const;
  /// A load of an SFA / SFB element as its bits: E8M0 scales come as uint8 or float8_e8m0fnu tiles (the same
  /// bytes), the latter read through tl.reinterpret.
  static Expr ScaleBits(Expr load);

  std::vector<std::pair<const Region*, Access>> Regions() const override;
  std::vector<Expr> Exprs() const override { return {k_start}; }
  Stmt WithOperands(std::vector<Region> regions, std::vector<Expr> exprs) const override;
  std::vector<int64_t> Attrs() const override;
  TileOpCall Call() const override;
  void Check() const override;
};

}  // namespace tl
