// T.tcgen05_gemm; see tcgen05_gemm.h.
#include "op/tcgen05_gemm.h"

#include "ir/printer.h"
#include "op/tile_op_checks.h"

namespace tl {

Stmt Tcgen05GemmNode::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  return std::make_shared<Tcgen05GemmNode>(std::move(r.at(0)), std::move(r.at(1)), std::move(r.at(2)),
                                           trans_A, trans_B, mbar ? e.at(1) : nullptr, e.at(0), use_2cta,
                                           span);
}

TileOpCall Tcgen05GemmNode::Call() const {
  TileOpCall c{"tcgen05_gemm",
               {{TileOpArg::kRegion, &A, nullptr}, {TileOpArg::kRegion, &B, nullptr}, {TileOpArg::kRegion, &C, nullptr}},
               {}};
  if (trans_A) c.keywords.emplace_back("transpose_A", "True");
  if (trans_B) c.keywords.emplace_back("transpose_B", "True");
  c.keywords.emplace_back("clear_accum", PrintExpr(clear_accum));
  if (mbar) c.keywords.emplace_back("mbar", PrintExpr(mbar));
  if (use_2cta) c.keywords.emplace_back("use_2cta", "True");
  return c;
}

void Tcgen05GemmNode::Check() const {
  using namespace op_detail;
  auto bad = [&](const std::string& m) { throw UserError(ErrorKind::kType, "T.tcgen05_gemm: " + m, span); };
  if (B.buffer->scope != Scope::kShared)
    bad("operand B '" + B.buffer->name + "' must be a shared-memory tile (T.alloc_shared)");
  if (A.buffer->scope != Scope::kShared && A.buffer->scope != Scope::kTensorMemory)
    bad("operand A '" + A.buffer->name +
        "' must be a shared-memory tile (T.alloc_shared) or tensor memory "
        "(T.alloc_tmem, 16-bit: TileLang's mma_ts)");
  if (C.buffer->scope != Scope::kTensorMemory)
    bad("the accumulator C '" + C.buffer->name + "' must be tensor memory (T.alloc_tmem)");
  const DataType at = A.buffer->dtype, bt = B.buffer->dtype, ct = C.buffer->dtype;
  auto f8 = [](DataType t) {
    return t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2;
  };
  const bool f16 = at == bt && (at == DataType::Float(16) || at == DataType::BFloat16());
  auto i8 = [](DataType t) { return (t.is_int() || t.is_uint()) && t.bits() == 8; };
  if (((!f16 && !(f8(at) && f8(bt))) || ct != DataType::Float(32)) && !(i8(at) && i8(bt) && ct == DataType::Int(32)))
    bad("takes float16 or bfloat16 A and B (alike; kind::f16) or float8_e4m3fn / float8_e5m2 A and B (any mix; "
        "kind::f8f6f4) with a float32 accumulator, or int8 / uint8 A and B (any mix; kind::i8) with an int32 one; "
        "got A " + at.str() + ", B " + bt.str() + ", C " + ct.str());
  if (clear_accum->dtype != DataType::Bool()) bad("clear_accum must be a bool or a boolean kernel expression");
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
// T.tcgen05_gemm(A, B, C) with exprs [clear_accum, (mbar)] and attrs transpose_A, transpose_B, has_mbar,
// use_2cta
const TileOpRegistrar kRegisterTcgen05Gemm(
    "tcgen05_gemm",
    [](std::vector<Region> r, std::vector<Expr> e, const std::map<std::string, int64_t>& a, Span s) -> Stmt {
      const bool has_mbar = AttrOr(a, "has_mbar", 0) != 0;
      return std::make_shared<Tcgen05GemmNode>(r.at(0), r.at(1), r.at(2), AttrOr(a, "transpose_A", 0) != 0,
                                               AttrOr(a, "transpose_B", 0) != 0, has_mbar ? e.at(1) : nullptr,
                                               e.at(0), AttrOr(a, "use_2cta", 0) != 0, std::move(s));
    });
}  // namespace

}  // namespace tl
