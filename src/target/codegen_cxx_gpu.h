// The part of the CUDA and HIP code generators that is the same C++ in both dialects: the kernel
// signature, type names, literals, loop pragmas, the block scope (block indices, buffers, variable
// initialisers) and the calls both device headers spell alike (vector accesses, shuffles, atomics,
// math). A dialect supplies its header lines, how it reads a block index, how it declares the
// kernel's shared byte buffer, and its own intrinsics.
#pragma once
#include <string>
#include <vector>

#include "target/codegen_c.h"

namespace tl {

class CodegenCxxGpu : public CodegenC {
 protected:
  /// `backend` names the dialect in errors ("CUDA", "HIP").
  CodegenCxxGpu(const PrimFunc& f, std::string arch, std::string backend)
      : CodegenC("tl::"), f_(f), arch_(std::move(arch)), backend_(std::move(backend)) {}

  /// The translation unit: `banner` as a comment, the `#include` lines, then the kernel.
  std::string Emit(const std::string& banner, const std::vector<std::string>& includes);

  std::string CType(DataType t) override;
  std::string InfLiteral(bool neg) override { return neg ? "(-tl::inf())" : "tl::inf()"; }
  std::string NanLiteral() override { return "tl::nan()"; }
  void ForPragma(const ForNode* n, int ind) override;
  std::string Addr(const Expr& e) { return "(&" + Lvalue(e) + ")"; }

  /// The calls spelled alike in both dialects, then the device header's math and runtime helpers;
  /// any other op is a clear "no lowering" error naming the backend.
  std::string CommonCallE(const CallNode* c);

  void Kernel(const KernelNode* n, int ind) override;
  /// `blockIdx.x` / `tl::block_x()`: the block index along "x", "y" or "z".
  virtual std::string BlockIndex(const char* dim) = 0;
  /// Declares the kernel's one shared byte buffer (placed by PlanSharedMemory), `count` bytes.
  virtual void SharedBytes(const Buffer& b, int64_t count, int ind) = 0;
  /// The alignment attribute of register arrays.
  virtual std::string LocalAlign() = 0;
  /// Parameters after the kernel's own (CUDA: TMA tensor maps), each starting with ", ".
  virtual std::string ExtraParams() { return ""; }
  /// Attributes written before the kernel's name (CUDA: __cluster_dims__), each ending with a space.
  virtual std::string KernelAttributes() { return ""; }

  PrimFunc f_;
  std::string arch_, backend_;
};

}  // namespace tl
