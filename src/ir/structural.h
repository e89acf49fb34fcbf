// Structural equality and hashing modulo renaming: two functions that differ only in the names
// (identities) of their vars and buffers are equal and hash equal.
#pragma once
#include <cstdint>

#include "ir/function.h"

namespace tl {
bool StructuralEqual(const PrimFunc& a, const PrimFunc& b);
/// With map_free_vars, vars not defined inside the compared trees are matched by position of
/// first use; otherwise they must be the same var.
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars = false);
bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars = false);
uint64_t StructuralHash(const PrimFunc& f);
uint64_t StructuralHash(const Stmt& s, bool map_free_vars = false);
uint64_t StructuralHash(const Expr& e, bool map_free_vars = false);
}  // namespace tl
