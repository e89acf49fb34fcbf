// T.reduce_{sum,max,min,abssum,absmax}: the destination is the source tile without the reduced dim.
#include "op/tile_op_checks.h"

namespace tl {

void ReduceNode::Check() const {
  const ReduceNode& r = *this;
  using namespace op_detail;
  auto s = Extents(r.src.ranges);
  if (r.dim < 0 || r.dim >= static_cast<int>(s.size()))
    throw UserError(ErrorKind::kType,
                    "dim=" + std::to_string(r.dim) + " of T.reduce_" + ReduceKindName(r.reduce_kind) +
                        " is out of range for the " + std::to_string(s.size()) + "-d source '" +
                        r.src.buffer->name + "'",
                    r.span);
  std::vector<Range> expected;
  for (size_t i = 0; i < r.src.ranges.size(); ++i)
    if (static_cast<int>(i) != r.dim) expected.push_back(r.src.ranges[i]);
  if (!SameTileShape(expected, r.dst.ranges))
    throw UserError(ErrorKind::kType,
                    std::string("T.reduce_") + ReduceKindName(r.reduce_kind) + " destination '" +
                        r.dst.buffer->name + "' is " + ShapeStr(Extents(r.dst.ranges)) + " but reducing '" +
                        r.src.buffer->name + "' " + ShapeStr(s) + " over dim " + std::to_string(r.dim) +
                        " gives " + ShapeStr(Extents(expected)),
                    r.span);
}

const char* ReduceKindName(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kAbsSum: return "abssum";
    case ReduceKind::kAbsMax: return "absmax";
  }
  return "?";
}

std::vector<std::pair<const Region*, Access>> ReduceNode::Regions() const {
  return {{&src, Access::kRead}, {&dst, clear ? Access::kWrite : Access::kReadWrite}};
}
Stmt ReduceNode::WithOperands(std::vector<Region> r, std::vector<Expr>) const {
  return std::make_shared<ReduceNode>(reduce_kind, std::move(r.at(0)), std::move(r.at(1)), dim, clear, span);
}
std::vector<int64_t> ReduceNode::Attrs() const { return {static_cast<int64_t>(reduce_kind), dim, clear}; }
TileOpCall ReduceNode::Call() const {
  TileOpCall c{std::string("reduce_") + ReduceKindName(reduce_kind),
               {{TileOpArg::kRegion, &src, nullptr}, {TileOpArg::kRegion, &dst, nullptr}},
               {{"dim", std::to_string(dim)}}};
  if (!clear) c.keywords.emplace_back("clear", "False");
  return c;
}

namespace {
// T.reduce_<kind>(src, dst, dim, clear), one name per kind
struct RegisterReductions {
  RegisterReductions() {
    for (ReduceKind k :
         {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin, ReduceKind::kAbsSum, ReduceKind::kAbsMax})
      RegisterTileOp(std::string("reduce_") + ReduceKindName(k),
                     [k](std::vector<Region> r, std::vector<Expr>, const std::map<std::string, int64_t>& a,
                         Span s) -> Stmt {
                       return std::make_shared<ReduceNode>(
                           k, r.at(0), r.at(1), static_cast<int>(op_detail::AttrOr(a, "dim", 0)),
                           op_detail::AttrOr(a, "clear", 1) != 0, std::move(s));
                     });
  }
} const kRegisterReductions;
}  // namespace

}  // namespace tl
