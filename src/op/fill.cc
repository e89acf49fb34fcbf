// T.fill(dst, value): every element of a tile set to one value (converted to the tile's dtype).
#include "op/fill.h"

namespace tl {

std::vector<std::pair<const Region*, Access>> FillNode::Regions() const { return {{&dst, Access::kWrite}}; }
Stmt FillNode::WithOperands(std::vector<Region> r, std::vector<Expr> e) const {
  return std::make_shared<FillNode>(std::move(r.at(0)), std::move(e.at(0)), span);
}
TileOpCall FillNode::Call() const {
  return {"fill", {{TileOpArg::kRegion, &dst, nullptr}, {TileOpArg::kExpr, nullptr, value}}, {}};
}

namespace {
// T.fill(dst, value)
const TileOpRegistrar kRegisterFill("fill",
                                    [](std::vector<Region> r, std::vector<Expr> e,
                                       const std::map<std::string, int64_t>&, Span s) -> Stmt {
                                      return std::make_shared<FillNode>(r.at(0), e.at(0), std::move(s));
                                    });
}  // namespace

}  // namespace tl
