// OpenCL C's reserved names, its type spellings, and the backend's unsupported-feature error.
#pragma once
#include <set>
#include <string>

#include "ir/dtype.h"
#include "support/error.h"

namespace tl {
namespace opencl_detail {

/// OpenCL C keywords, address-space qualifiers, vector types and the builtins the generated code
/// calls: never handed out as a user variable's name (on top of the C/C++/CUDA names).
std::set<std::string> OpenCLReservedNames();
/// A UserError(kUnsupported) at `sp`.
[[noreturn]] void Unsupported(const std::string& what, const Span& sp = {});
/// The OpenCL C spelling of a scalar type ("half", "uint", ...); unsupported dtypes are an error.
std::string ClType(DataType t);
/// A short type suffix for helper names: i32, u8, f64, ...
std::string Suffix(DataType t);

}  // namespace opencl_detail
}  // namespace tl
