// The Metal target's features and the dtype check; see target.h and passes.h.
#include "target/metal/target.h"

#include "target/metal/passes.h"

#include "op/atomic_add.h"
#include "target/dtype_check.h"
#include "support/error.h"

namespace tl {
namespace {

// What MSL cannot express (dtype_check.h), and Metal's atomics: 32-bit only.
std::string MetalLacks(DataType t) {
  if (t.code() == DataType::Code::kFloat && t.bits() == 64)
    return "float64 (Metal GPUs have no double precision)";
  if (t.code() == DataType::Code::kFloat8E4M3 || t.code() == DataType::Code::kFloat8E5M2 ||
      t.code() == DataType::Code::kFloat8E8M0)
    return t.str() + " (MSL has no 8-bit float type)";
  if (t.code() == DataType::Code::kFloat4E2M1) return t.str() + " (MSL has no 4-bit float type)";
  if (t.code() == DataType::Code::kFloat6E2M3 || t.code() == DataType::Code::kFloat6E3M2)
    return t.str() + " (MSL has no 6-bit float type)";
  if (t.bits() < 8 && !t.is_bool() && !t.is_void()) return t.str() + " (MSL has no sub-byte types)";
  return "";
}

class MetalTypeCheck : public DtypeCheck {
 public:
  MetalTypeCheck() : DtypeCheck("Metal", MetalLacks) {}

 protected:
  void VisitCall(const CallNode* n) override {
    if ((n->op == "tl.atomic_add" || n->op == "atomic_add" || n->op == "tl.atomic_max" ||
         n->op == "tl.atomic_min") &&
        !n->args.empty())
      Atomic(n->args[0]->dtype);
    SpanTrackingVisitor::VisitCall(n);
  }
  void VisitTileOp(const StmtNode* s) override {
    if (auto* a = As<AtomicAddNode>(s)) Atomic(a->dst.buffer->dtype);
    SpanTrackingVisitor::VisitTileOp(s);
  }

 private:
  void Atomic(DataType t) {
    if (t.bits() == 64)
      throw UserError(ErrorKind::kUnsupported,
                      "T.atomic_add on " + t.str() +
                          ": Metal has no 64-bit atomic add (atomic_int, atomic_uint and atomic_float only)",
                      span_);
    if (t.bits() < 32 && !t.is_bool())
      throw UserError(ErrorKind::kUnsupported,
                      "T.atomic_add on " + t.str() + ": Metal atomics are 32-bit (int32, uint32, float32)",
                      span_);
  }
};

}  // namespace

GpuFeatures MetalFeatures() {
  GpuFeatures f;
  f.name = "Metal";
  f.arch = "Apple GPU (Metal)";
  f.label = "Metal";
  f.matrix = MatrixUnit::kSimdgroupMatrix;
  f.async_copy = AsyncCopy::kNone;
  f.swizzle = SharedSwizzle::kNone;  // simdgroup_load reads plain rows
  f.shuffle = true;                  // simd_shuffle_xor over 32-wide SIMD-groups
  f.ordered_atomics = false;  // Metal atomics are memory_order_relaxed
  f.atomics_64 = false;
  f.fetch_atomics = false;  // not implemented in the Metal code generator
  f.wave = 32;
  f.vector_shared_loads = false;
  f.vector_shared_stores = false;
  f.int_to_global_pointer = false;
  f.smem_limit = 32 * 1024;
  f.max_threads = 1024;
  return f;
}

// The dtypes Metal lacks (float64, fp8, 64-bit atomics), at the op that uses them.
PrimFunc CheckMetalTypes(const PrimFunc& f, const PassContext&) {
  MetalTypeCheck().Run(f);
  return f;
}

}  // namespace tl
