// Scalar and vector data types of the IR (float16 ... float8, int4 ... uint64, bool, lanes).
#pragma once
#include <cstdint>
#include <string>

namespace tl {

class DataType {
 public:
  enum class Code : uint8_t {
    kInt,
    kUInt,
    kFloat,
    kBFloat,
    kFloat8E4M3,
    kFloat8E5M2,
    kFloat4E2M1,  // OCP MX fp4 (float4_e2m1fn): finite only, one value a byte (the low nibble), as ml_dtypes
    kFloat6E2M3,  // OCP MX fp6 (float6_e2m3fn): finite only, one value a byte (the low 6 bits), as ml_dtypes
    kFloat6E3M2,  // OCP MX fp6 (float6_e3m2fn), the same
    kBool,
    kHandle,
    kVoid,
    kFloat8E8M0,  // OCP MX scale (float8_e8m0fnu): 2^(e - 127), no sign, no zero; 0xFF is NaN, as ml_dtypes
  };

  DataType() = default;
  DataType(Code code, int bits, int lanes = 1) : code_(code), bits_(bits), lanes_(lanes) {}

  static DataType Int(int bits, int lanes = 1) { return {Code::kInt, bits, lanes}; }
  static DataType UInt(int bits, int lanes = 1) { return {Code::kUInt, bits, lanes}; }
  static DataType Float(int bits, int lanes = 1) { return {Code::kFloat, bits, lanes}; }
  static DataType BFloat16() { return {Code::kBFloat, 16}; }
  static DataType Bool() { return {Code::kBool, 1}; }
  static DataType Handle() { return {Code::kHandle, 64}; }
  static DataType Void() { return {Code::kVoid, 0}; }
  static DataType Index() { return Int(32); }

  /// Parses "float16", "bfloat16", "float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn",
  /// "int4", "float32x4", "bool", ... Returns false on an unknown name.
  static bool Parse(const std::string& name, DataType* out);

  Code code() const { return code_; }
  int bits() const { return bits_; }
  int lanes() const { return lanes_; }
  int bytes() const { return (bits_ * lanes_ + 7) / 8; }
  DataType element_of() const { return {code_, bits_, 1}; }
  DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

  bool is_int() const { return code_ == Code::kInt; }
  bool is_uint() const { return code_ == Code::kUInt; }
  bool is_integer() const { return is_int() || is_uint(); }
  bool is_float() const {
    return code_ == Code::kFloat || code_ == Code::kBFloat || code_ == Code::kFloat8E4M3 ||
           code_ == Code::kFloat8E5M2 || code_ == Code::kFloat8E8M0 || is_mx_float();
  }
  /// The OCP MX sub-byte floats (fp4 / fp6: no infinities or NaN, one value a byte).
  bool is_mx_float() const {
    return code_ == Code::kFloat4E2M1 || code_ == Code::kFloat6E2M3 || code_ == Code::kFloat6E3M2;
  }
  bool is_bool() const { return code_ == Code::kBool; }
  bool is_void() const { return code_ == Code::kVoid; }
  bool is_handle() const { return code_ == Code::kHandle; }

  std::string str() const;
  bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }

 private:
  Code code_ = Code::kVoid;
  uint16_t bits_ = 0;
  uint16_t lanes_ = 1;
};

}  // namespace tl
