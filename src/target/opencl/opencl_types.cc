// OpenCL C's reserved names and type spellings; see opencl_types.h.
#include "target/opencl/opencl_types.h"

#include "support/error.h"
#include "target/codegen_c.h"
#include "target/cpu/codegen_cpu.h"
#include "target/cuda/codegen_cuda.h"

namespace tl {
namespace opencl_detail {

// OpenCL C keywords, address-space qualifiers, vector types and the builtins the generated code
// calls: never handed out as a user variable's name (on top of the C/C++/CUDA names).
std::set<std::string> OpenCLReservedNames() {
  std::set<std::string> s = CReservedNames();
  for (const char* n : {"kernel",
                        "__kernel",
                        "global",
                        "__global",
                        "local",
                        "__local",
                        "constant",
                        "__constant",
                        "private",
                        "__private",
                        "generic",
                        "read_only",
                        "write_only",
                        "read_write",
                        "uchar",
                        "ushort",
                        "uint",
                        "ulong",
                        "half",
                        "barrier",
                        "mem_fence",
                        "get_local_id",
                        "get_group_id",
                        "get_global_id",
                        "get_local_size",
                        "get_num_groups",
                        "vload2",
                        "vload4",
                        "vload8",
                        "vload16",
                        "vstore2",
                        "vstore4",
                        "vstore8",
                        "vstore16",
                        "float2",
                        "float4",
                        "float8",
                        "float16",
                        "double2",
                        "double4",
                        "double8",
                        "int2",
                        "int4",
                        "int8",
                        "int16",
                        "long2",
                        "long4",
                        "char2",
                        "char4",
                        "char8",
                        "char16",
                        "short2",
                        "short4",
                        "short8",
                        "half2",
                        "half4",
                        "half8",
                        "half16",
                        "fmin",
                        "fmax",
                        "fmod",
                        "rint",
                        "as_uint",
                        "as_float",
                        "as_ulong",
                        "as_double",
                        "atomic_add",
                        "atomic_cmpxchg",
                        "atom_add",
                        "atom_cmpxchg",
                        "convert_int",
                        "select",
                        "clamp",
                        "mad",
                        "FLT_MAX",
                        "DBL_MAX",
                        "INT_MIN",
                        "INT_MAX",
                        "LONG_MIN",
                        "LONG_MAX",
                        "CLK_LOCAL_MEM_FENCE",
                        "CLK_GLOBAL_MEM_FENCE",
                        "event_t",
                        "sampler_t",
                        "image2d_t",
                        "image3d_t",
                        "pipe",
                        "complex",
                        "imaginary"})
    s.insert(n);
  return s;
}

void Unsupported(const std::string& what, const Span& sp) {
  throw UserError(ErrorKind::kUnsupported, what, sp);
}

std::string ClType(DataType t) {
  switch (t.code()) {
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kInt:
      switch (t.bits()) {
        case 8: return "char";
        case 16: return "short";
        case 32: return "int";
        case 64: return "long";
      }
      break;
    case DataType::Code::kUInt:
      switch (t.bits()) {
        case 8: return "uchar";
        case 16: return "ushort";
        case 32: return "uint";
        case 64: return "ulong";
      }
      break;
    case DataType::Code::kFloat:
      if (t.bits() == 16) return "half";
      if (t.bits() == 32) return "float";
      if (t.bits() == 64) return "double";
      break;
    case DataType::Code::kHandle: return "void*";
    case DataType::Code::kVoid: return "void";
    default: break;
  }
  Unsupported(
      "the OpenCL backend does not support the dtype " + t.str() +
      " (OpenCL C has no such type; supported: bool, int8-64, uint8-64, float16 with cl_khr_fp16, float32, "
      "float64 with cl_khr_fp64)");
}

// A short type suffix for helper names: i32, u8, f64, ...
std::string Suffix(DataType t) {
  std::string c = t.is_int() ? "i" : t.is_uint() ? "u" : t.is_bool() ? "b" : "f";
  return c + std::to_string(t.bits());
}

}  // namespace opencl_detail
}  // namespace tl
