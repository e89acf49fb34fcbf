// Hopper tile ops; see hopper_ops.h.
#include "op/hopper_ops.h"

#include "op/tile_op_checks.h"
#include "support/error.h"

namespace tl {

TileOpCall WaitWgmmaNode::Call() const {
  return {"wait_wgmma", {{TileOpArg::kExpr, nullptr, Int(static_cast<int32_t>(n))}}, {}};
}

void WaitWgmmaNode::Check() const {
  if (n < 0 || n > 7)
    throw UserError(
        ErrorKind::kType,
        "T.wait_wgmma(n): n is the number of wgmma groups left pending, 0..7; got " + std::to_string(n),
        span);
}

namespace {
using op_detail::AttrOr;
const TileOpRegistrar kRegisterWaitWgmma("wait_wgmma",
                                         [](std::vector<Region>, std::vector<Expr>,
                                            const std::map<std::string, int64_t>& a, Span s) -> Stmt {
                                           return std::make_shared<WaitWgmmaNode>(AttrOr(a, "n", 0),
                                                                                  std::move(s));
                                         });
}  // namespace

}  // namespace tl
