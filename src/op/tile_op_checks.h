// Semantic checks of the tile ops, run when an op node is built (by the front end or from C++):
// operand memory scopes, dtypes and tile shapes. Each throws a UserError(kType) at the op's span.
// The targets' lowerings rely on these; what a particular target cannot do is checked there.
#pragma once
#include "ir/stmt.h"

namespace tl {
void CheckCopy(const CopyNode& c);
void CheckGemm(const GemmNode& g);
void CheckReduce(const ReduceNode& r);
void CheckCumsum(const CumsumNode& c);
void CheckAtomicAdd(const AtomicAddNode& a);

namespace op_detail {
/// The extents of a region without unit dims.
std::vector<Expr> NonUnit(const std::vector<Range>& ranges);
/// "(a, b)" / "(a,)" as Python prints a shape.
std::string ShapeStr(const std::vector<Expr>& extents);
/// Both constant and different (symbolic extents are not compared at compile time).
bool DimsDiffer(const Expr& a, const Expr& b);
bool SameTileShape(const std::vector<Range>& a, const std::vector<Range>& b);
std::vector<Expr> Extents(const std::vector<Range>& ranges);
}  // namespace op_detail
}  // namespace tl
