// Parsing and printing of data type names, spelled as TileLang spells them.
#include "ir/dtype.h"

#include <cstdlib>

namespace tl {

bool DataType::Parse(const std::string& full, DataType* out) {
  std::string name = full;
  int lanes = 1;
  size_t x = name.rfind('x');
  if (x != std::string::npos && x + 1 < name.size()) {
    bool digits = name.size() - x - 1 <= 5;  // lanes are stored in 16 bits
    for (size_t i = x + 1; i < name.size(); ++i) digits &= (name[i] >= '0' && name[i] <= '9');
    if (digits) {
      lanes = std::atoi(name.c_str() + x + 1);
      name = name.substr(0, x);
    }
  }
  if (lanes > 65535) return false;
  if (lanes < 1) return false;
  auto bits_after = [&](const std::string& prefix, int* bits) {
    if (name.compare(0, prefix.size(), prefix) != 0) return false;
    std::string rest = name.substr(prefix.size());
    if (rest.empty()) return false;
    for (char c : rest)
      if (c < '0' || c > '9') return false;
    *bits = std::atoi(rest.c_str());
    return true;
  };
  int bits = 0;
  if (name == "bool") {
    *out = DataType(Code::kBool, 1, lanes);
    return true;
  }
  if (name == "bfloat16") {
    *out = DataType(Code::kBFloat, 16, lanes);
    return true;
  }
  if (name == "float8_e4m3fn" || name == "float8_e4m3" || name == "e4m3_float8") {
    *out = DataType(Code::kFloat8E4M3, 8, lanes);
    return true;
  }
  if (name == "float8_e8m0fnu" || name == "float8_e8m0") {
    *out = DataType(Code::kFloat8E8M0, 8, lanes);
    return true;
  }
  if (name == "float8_e5m2" || name == "e5m2_float8") {
    *out = DataType(Code::kFloat8E5M2, 8, lanes);
    return true;
  }
  if (name == "float4_e2m1fn" || name == "float4_e2m1") {
    *out = DataType(Code::kFloat4E2M1, 4, lanes);
    return true;
  }
  if (name == "float6_e2m3fn" || name == "float6_e2m3") {
    *out = DataType(Code::kFloat6E2M3, 6, lanes);
    return true;
  }
  if (name == "float6_e3m2fn" || name == "float6_e3m2") {
    *out = DataType(Code::kFloat6E3M2, 6, lanes);
    return true;
  }
  if (name == "handle") {
    *out = Handle();
    return true;
  }
  if (bits_after("uint", &bits)) {
    if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64) return false;
    *out = DataType(Code::kUInt, bits, lanes);
    return true;
  }
  if (bits_after("int", &bits)) {
    if (bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64) return false;
    *out = DataType(Code::kInt, bits, lanes);
    return true;
  }
  if (bits_after("float", &bits)) {
    if (bits != 16 && bits != 32 && bits != 64) return false;
    *out = DataType(Code::kFloat, bits, lanes);
    return true;
  }
  return false;
}

std::string DataType::str() const {
  std::string s;
  switch (code_) {
    case Code::kInt: s = "int" + std::to_string(bits_); break;
    case Code::kUInt: s = "uint" + std::to_string(bits_); break;
    case Code::kFloat: s = "float" + std::to_string(bits_); break;
    case Code::kBFloat: s = "bfloat16"; break;
    case Code::kFloat8E4M3: s = "float8_e4m3fn"; break;
    case Code::kFloat8E5M2: s = "float8_e5m2"; break;
    case Code::kFloat8E8M0: s = "float8_e8m0fnu"; break;
    case Code::kFloat4E2M1: s = "float4_e2m1fn"; break;
    case Code::kFloat6E2M3: s = "float6_e2m3fn"; break;
    case Code::kFloat6E3M2: s = "float6_e3m2fn"; break;
    case Code::kBool: s = "bool"; break;
    case Code::kHandle: return "handle";
    case Code::kVoid: return "void";
  }
  if (lanes_ > 1) s += "x" + std::to_string(lanes_);
  return s;
}

}  // namespace tl
