// T.tcgen05_gemm; see tcgen05_gemm.h.
#include "op/tcgen05_gemm.h"

#include "ir/printer.h"
#include "op/tile_op_checks.h"

namespace tl {

Stmt Tcgen05GemmNode::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  const size_t m = scaled() ? 2 : 1;  // mbar's index
  return std::make_shared<Tcgen05GemmNode>(
      std::move(r.at(0)), std::move(r.at(1)), std::move(r.at(2)), trans_A, trans_B, mbar ? e.at(m) : nullptr,
      e.at(0), use_2cta, span, scaled() ? std::move(r.at(3)) : Region{},
      scaled() ? std::move(r.at(4)) : Region{}, scaled() ? e.at(1) : nullptr, gran_a, gran_b, wait, fp4);
}

TileOpCall Tcgen05GemmNode::Call() const {
  TileOpCall c{scaled() ? "tcgen05_gemm_blockscaled" : wait ? "gemm" : "tcgen05_gemm",
               {{TileOpArg::kRegion, &A, nullptr},
                {TileOpArg::kRegion, &B, nullptr},
                {TileOpArg::kRegion, &C, nullptr}},
               {}};
  if (scaled())
    for (const Region* r : {&SFA, &SFB}) c.args.push_back({TileOpArg::kRegion, r, nullptr});
  if (trans_A) c.keywords.emplace_back("transpose_A", "True");
  if (trans_B) c.keywords.emplace_back("transpose_B", "True");
  c.keywords.emplace_back("clear_accum", PrintExpr(clear_accum));
  if (mbar) c.keywords.emplace_back("mbar", PrintExpr(mbar));
  if (scaled()) {
    c.keywords.emplace_back("k_start", PrintExpr(k_start));
    c.keywords.emplace_back("sf_a_granularity_k", std::to_string(gran_a));
    c.keywords.emplace_back("sf_b_granularity_k", std::to_string(gran_b));
  }
  if (use_2cta) c.keywords.emplace_back("use_2cta", "True");
  return c;
}

TileOpCall Tcgen05CpNode::Call() const {
  TileOpCall c{"tcgen05_cp_warpx4",
               {{TileOpArg::kRegion, &src, nullptr},
                {TileOpArg::kRegion, &dst, nullptr},
                {TileOpArg::kExpr, nullptr, col}},
               {}};
  if (use_2cta) c.keywords.emplace_back("use_2cta", "True");
  return c;
}

namespace {
// A uint32 shared tile of whole 128-word chunks (the scale factors of 128 rows or columns, four K groups a
// word).
void CheckSfTile(const Region& r, const char* what, const Span& sp) {
  int64_t n = 1;
  for (const Range& x : r.ranges) {
    int64_t e = 0;
    if (!AsConstInt(x.extent, &e)) n = -1;
    if (n > 0) n *= e;
  }
  if (r.buffer->scope != Scope::kShared || r.buffer->dtype != DataType::UInt(32) || n <= 0 || n % 128)
    throw UserError(ErrorKind::kType,
                    std::string(what) + ": '" + r.buffer->name +
                        "' must be a uint32 shared tile (T.alloc_shared) of a constant multiple of 128 words "
                        "(each 128 words the scale factors of 128 rows); got " +
                        r.buffer->dtype.str() + (n > 0 ? ", " + std::to_string(n) + " words" : ""),
                    sp);
}
}  // namespace

void Tcgen05CpNode::Check() const {
  CheckSfTile(src, "T.tcgen05_cp_warpx4 source", span);
  if (dst.buffer->scope != Scope::kTensorMemory || dst.buffer->dtype != DataType::UInt(32))
    throw UserError(ErrorKind::kType,
                    "T.tcgen05_cp_warpx4: the destination '" + dst.buffer->name +
                        "' must be uint32 tensor memory (T.alloc_tmem([128, columns], \"uint32\"))",
                    span);
  if (!col->dtype.is_int() && !col->dtype.is_uint())
    throw UserError(ErrorKind::kType, "T.tcgen05_cp_warpx4: tmem_col_offset must be an integer", span);
}

void Tcgen05SfTransposeNode::Check() const { CheckSfTile(region, "T.tcgen05_sf_warp_transpose", span); }

void Tcgen05GemmNode::Check() const {
  using namespace op_detail;
  auto bad = [&](const std::string& m) {
    throw UserError(ErrorKind::kType, std::string(wait ? "T.gemm into tensor memory: " : "T.tcgen05_gemm: ") + m,
                    span);
  };
  if (B.buffer->scope != Scope::kShared)
    bad("operand B '" + B.buffer->name + "' must be a shared-memory tile (T.alloc_shared)");
  if (A.buffer->scope != Scope::kShared && A.buffer->scope != Scope::kTensorMemory)
    bad("operand A '" + A.buffer->name +
        "' must be a shared-memory tile (T.alloc_shared) or tensor memory "
        "(T.alloc_tmem, 16-bit: TileLang's mma_ts)");
  if (C.buffer->scope != Scope::kTensorMemory)
    bad("the accumulator C '" + C.buffer->name + "' must be tensor memory (T.alloc_tmem)");
  const DataType at = A.buffer->dtype, bt = B.buffer->dtype, ct = C.buffer->dtype;
  auto fp8 = [](DataType t) {
    return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2;
  };
  // an 8-bit float, or fp4: a float4_e2m1fn tile (which the CUDA backend stores in the tensor cores' padded
  // form where it can: PadFp4TilesCUDA) or one so stored (Fp4A / Fp4B)
  auto fp4 = [](DataType t) { return t.code() == DataType::Code::kFloat4E2M1; };
  auto mx = [](DataType t) { return t.is_mx_float(); };  // fp4, fp6
  const bool pa = (PaddedType(false) || PackedA()) && at == DataType::UInt(8),
             pb = (PaddedType(true) || PackedB()) && bt == DataType::UInt(8);
  const bool fa = fp8(at) || mx(at) || pa, fb = fp8(bt) || mx(bt) || pb;
  const bool f16 = at == bt && (at == DataType::Float(16) || at == DataType::BFloat16());
  // float32 A and B: kind::tf32 (the tensor cores read the top 19 bits of each value)
  const bool tf32 = at == DataType::Float(32) && bt == DataType::Float(32) && ct == DataType::Float(32);
  auto i8 = [](DataType t) { return (t.is_int() || t.is_uint()) && t.bits() == 8; };
  // (a float16 accumulator: D type F16 of kind::f16 and kind::f8f6f4, one value a 32-bit column)
  const bool float_acc = ct == DataType::Float(32) || ct == DataType::Float(16);
  if (((!f16 && !(fa && fb)) || !float_acc) && !(i8(at) && i8(bt) && ct == DataType::Int(32)) && !tf32)
    bad("takes float16 or bfloat16 A and B (alike; kind::f16) or float8_e4m3fn / float8_e5m2 A and B (any "
        "mix; "
        "kind::f8f6f4; float4_e2m1fn too, stored as the tensor cores read it) with a float32 or float16 "
        "accumulator, float32 A and B (kind::tf32) with a float32 one, or int8 / uint8 A and B (any mix; "
        "kind::i8) with an int32 one; got A " +
        at.str() + ", B " + bt.str() + ", C " + ct.str());
  if (tf32 && (trans_A || !trans_B || A.buffer->scope != Scope::kShared))
    bad("float32 (kind::tf32) operands are K-major shared tiles here (A [M, K], B [N, K] with "
        "transpose_B=True): MN-major 32-bit operands take the 128-byte swizzle with 32-byte atoms, which "
        "this "
        "compiler does not lay out");
  if (((pa || mx(at)) && trans_A) || ((pb || mx(bt)) && !trans_B))
    bad("fp4 and fp6 operands are K-major (A [M, K], B [N, K] with transpose_B=True): the tensor cores read "
        "sub-byte "
        "values only so");
  if (clear_accum->dtype != DataType::Bool()) bad("clear_accum must be a bool or a boolean kernel expression");
  if (scaled()) {
    if (!fa || !fb || ct != DataType::Float(32) || A.buffer->scope != Scope::kShared)
      throw UserError(ErrorKind::kType,
                      "T.tcgen05_gemm_blockscaled: takes float8_e4m3fn / float8_e5m2 / float4_e2m1fn A and B "
                      "shared tiles "
                      "(MXFP8 / MXFP4, kind::mxf8f6f4; fp6 operands are not implemented) and a float32 "
                      "accumulator; got A " +
                          at.str() + " (" + ScopeName(A.buffer->scope) + "), B " + bt.str() + ", C " +
                          ct.str(),
                      span);
    for (const Region* r : {&SFA, &SFB})
      if (r->buffer->scope != Scope::kTensorMemory || r->buffer->dtype != DataType::UInt(32))
        throw UserError(ErrorKind::kType,
                        "T.tcgen05_gemm_blockscaled: the scale factors '" + r->buffer->name +
                            "' must be uint32 tensor memory written by T.tcgen05_cp_warpx4",
                        span);
    if (gran_a == 16 || gran_b == 16) {  // NVFP4: fp4 A and B, UE4M3 scales per 16 values (kind::mxf4nvf4)
      if (gran_a != gran_b || !(fp4(at) || (PackedA() && pa)) || !(fp4(bt) || (PackedB() && pb)))
        throw UserError(
            ErrorKind::kType,
            "T.tcgen05_gemm_blockscaled: a granularity of 16 is NVFP4 (kind::mxf4nvf4, UE4M3 scales "
            "per 16 values), which takes float4_e2m1fn A and B and 16 for both granularities; got A " +
                at.str() + ", B " + bt.str() + ", sf_a_granularity_k " + std::to_string(gran_a) +
                ", sf_b_granularity_k " + std::to_string(gran_b),
            span);
    } else {
      for (int g : {gran_a, gran_b})
        if (g <= 0 || g % 32)
          throw UserError(
              ErrorKind::kType,
              "T.tcgen05_gemm_blockscaled: sf_a_granularity_k / sf_b_granularity_k = " + std::to_string(g) +
                  " must be 16 (NVFP4: fp4 A and B, UE4M3 scales) or a positive multiple of 32 (one "
                  "E8M0 scale a k32 step: scale_vec::1X)",
              span);
    }
    if (!k_start->dtype.is_int() && !k_start->dtype.is_uint())
      throw UserError(ErrorKind::kType, "T.tcgen05_gemm_blockscaled: k_start must be an integer", span);
  }
  if (mbar) {
    auto* l = As<BufferLoadNode>(mbar);
    if (!l || l->buffer->scope != Scope::kShared || l->buffer->dtype != DataType::UInt(64))
      bad("mbar must be an mbarrier from T.alloc_barrier (the buffer or one of its elements)");
  }
}

void Tcgen05MmaArriveNode::Check() const {
  auto* l = As<BufferLoadNode>(mbar);
  if (!l || l->buffer->scope != Scope::kShared || l->buffer->dtype != DataType::UInt(64))
    throw UserError(
        ErrorKind::kType,
        "T.tcgen05_mma_arrive: the argument must be an mbarrier from T.alloc_barrier (the buffer or one "
        "of its elements)",
        span);
}

namespace {
using op_detail::AttrOr;
const TileOpRegistrar kRegisterTcgen05MmaArrive(
    "tcgen05_mma_arrive",
    [](std::vector<Region>, std::vector<Expr> e, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      return std::make_shared<Tcgen05MmaArriveNode>(e.at(0), AttrOr(a, "arrive_2cta", 0) != 0, std::move(s));
    });
// T.tcgen05_gemm_blockscaled(A, B, C, SFA, SFB) with exprs [clear_accum, k_start, (mbar)] and attrs
// transpose_A, transpose_B, has_mbar, use_2cta, sf_a_granularity_k, sf_b_granularity_k: a Tcgen05GemmNode
const TileOpRegistrar kRegisterTcgen05GemmBlockScaled(
    "tcgen05_gemm_blockscaled",
    [](std::vector<Region> r, std::vector<Expr> e, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      const bool has_mbar = AttrOr(a, "has_mbar", 0) != 0;
      return std::make_shared<Tcgen05GemmNode>(
          r.at(0), r.at(1), r.at(2), AttrOr(a, "transpose_A", 0) != 0, AttrOr(a, "transpose_B", 0) != 0,
          has_mbar ? e.at(2) : nullptr, e.at(0), AttrOr(a, "use_2cta", 0) != 0, std::move(s), r.at(3),
          r.at(4), e.at(1), static_cast<int>(AttrOr(a, "sf_a_granularity_k", 0)),
          static_cast<int>(AttrOr(a, "sf_b_granularity_k", 0)));
    });
const TileOpRegistrar kRegisterTcgen05Cp("tcgen05_cp_warpx4",
                                         [](std::vector<Region> r, std::vector<Expr> e,
                                            const std::map<std::string, int64_t>& a, Span s) -> Stmt {
                                           return std::make_shared<Tcgen05CpNode>(
                                               r.at(0), r.at(1), e.at(0), AttrOr(a, "use_2cta", 0) != 0,
                                               std::move(s));
                                         });
const TileOpRegistrar kRegisterTcgen05SfTranspose("tcgen05_sf_warp_transpose",
                                                  [](std::vector<Region> r, std::vector<Expr>,
                                                     const std::map<std::string, int64_t>&, Span s) -> Stmt {
                                                    return std::make_shared<Tcgen05SfTransposeNode>(
                                                        r.at(0), std::move(s));
                                                  });
// T.tcgen05_gemm(A, B, C) with exprs [clear_accum, (mbar)] and attrs transpose_A, transpose_B, has_mbar,
// use_2cta; wait: T.gemm into tensor memory
const TileOpRegistrar kRegisterTcgen05Gemm(
    "tcgen05_gemm",
    [](std::vector<Region> r, std::vector<Expr> e, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      const bool has_mbar = AttrOr(a, "has_mbar", 0) != 0;
      return std::make_shared<Tcgen05GemmNode>(r.at(0), r.at(1), r.at(2), AttrOr(a, "transpose_A", 0) != 0,
                                               AttrOr(a, "transpose_B", 0) != 0, has_mbar ? e.at(1) : nullptr,
                                               e.at(0), AttrOr(a, "use_2cta", 0) != 0, std::move(s), Region{},
                                               Region{}, nullptr, 0, 0, AttrOr(a, "wait", 0) != 0);
    });
}  // namespace

}  // namespace tl
