// Prints IR in the DSL's own syntax: the output of PrintPrimFunc parses back to an equal function.
#pragma once
#include <string>

#include "ir/function.h"

namespace tl {
std::string PrintExpr(const Expr& e);
std::string PrintStmt(const Stmt& s, int indent = 0);
/// A whole module: `name = T.dynamic("name")` lines for symbolic dims, then the decorated def.
std::string PrintPrimFunc(const PrimFunc& f);
}  // namespace tl
