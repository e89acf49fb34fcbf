// LaunchSpec: everything a runtime module needs to check arguments and launch a compiled kernel,
// without the IR. The compiler derives it from the function (target/launch_spec_builder.cc); the
// runtime only evaluates it. Shapes and grid extents that depend on symbolic dimensions are small
// integer programs over the symbols' values, precomputed at compile time.
#pragma once
#include <cstdint>
#include <array>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "runtime/module.h"

namespace tl {

/// An integer expression over the symbolic dimensions, as a postfix program.
struct IntProgram {
  enum Op : uint8_t {
    kConst,
    kSym,  // push a value
    kAdd,
    kSub,
    kMul,
    kDiv,
    kMod,
    kFloorDiv,
    kFloorMod,
    kMin,
    kMax,
    kXor,  // pop two, push one
    kEQ,
    kNE,
    kLT,
    kLE,
    kGT,
    kGE,
    kAnd,
    kOr,
    kNot,    // pop one
    kSelect  // pop cond, then, else
  };
  struct Instr {
    Op op;
    int64_t value;  // the constant (kConst) or the symbol's index (kSym)
  };
  std::vector<Instr> code;
  std::string text;        // the expression as the user wrote it, for messages
  bool computable = true;  // false: it depends on something no argument shape binds (a scalar)

  /// The value for the given symbol values; false when not computable or on a division by zero.
  bool Eval(const std::vector<int64_t>& syms, int64_t* out) const;
  /// kSym with this index when the program is a lone symbol, else -1.
  int LoneSymbol() const {
    return code.size() == 1 && code[0].op == kSym ? static_cast<int>(code[0].value) : -1;
  }
};

struct ParamSpec {
  std::string name;
  bool is_tensor = false;
  DataType dtype;                 // element type (tensor) or the scalar's type
  std::vector<IntProgram> shape;  // tensors only
  bool written = false;           // the kernel may write it
  int size_of_sym = -1;           // scalars: the symbol (a T.make_tensor size) the value must equal
};

struct SymbolSpec {
  std::string name;
  DataType dtype;
};

/// A TMA tensor map the kernel takes as a `const __grid_constant__` parameter after its other
/// parameters (docs/hopper.md, "TMA"): a tiled view of tensor parameter `param` (row-major and
/// contiguous, so its dims and strides follow from the argument's shape at launch) cut into boxes of
/// `box` elements, written to shared memory in the given swizzle; out-of-bounds elements read as zero.
struct TensorMapSpec {
  int param = -1;            // index into LaunchSpec::params (a tensor)
  DataType dtype;            // element type (the tensor's)
  std::vector<int64_t> box;  // box extent per tensor axis, outermost first (each 1..256)
  int swizzle_bytes = 0;     // 0 (none), 32, 64 or 128
  bool oob_nan = false;      // out-of-bounds fill: false = zeros (the only fill this compiler asks for)
  // 0: the tensor's own elements; 1: CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B over a uint8 tensor of fp4 values
  // two a byte: dims and box count values (the innermost dim twice the tensor's bytes), each 16 values (8
  // bytes) land in the first 8 of 16 shared bytes, and the transaction counts the bytes read; 2:
  // CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B, fp6 values four in 3 bytes, 16 (12 bytes) in the first 12 of 16
  int format = 0;
  /// The shape the kernel tiles, outermost first, over the symbols: the parameter's own, or the view the
  /// program made of it (T.reshape, T.Tensor(..., data=...)), which has the argument's elements in another
  /// shape.
  std::vector<IntProgram> shape;
};
struct LaunchSpec;
/// The dims (outermost first) of tensor map `m` for these arguments and symbol values: its tiled shape, whose
/// element count must be the argument's. Throws UserError(kArgument) naming the parameter.
std::vector<int64_t> TensorMapDims(const LaunchSpec& spec, const TensorMapSpec& m,
                                   const std::vector<TensorArg>& args,
                                   const std::vector<int64_t>& sym_values);

struct LaunchSpec {
  std::string func_name;  // the kernel as the user named it (messages)
  std::string entry;      // the symbol to launch ("tl_entry" on the CPU, the __global__ name on GPUs)
  std::vector<ParamSpec> params;
  std::vector<SymbolSpec> syms;            // the symbolic dims, in the order the kernel takes their values
  /// blocks per dimension (GPU kinds), up to 3: programs over the symbols, then one value per parameter (an
  /// integer scalar's value, 0 for the others), so that `T.Kernel(T.ceildiv(n, 32))` with a scalar `n`
  /// launches
  std::vector<IntProgram> grid;
  int64_t threads = 0;                     // threads per block (GPU kinds)
  int64_t dynamic_smem = 0;                // bytes of dynamic shared / local memory per block
  std::vector<TensorMapSpec> tensor_maps;  // CUDA sm_90+: TMA descriptors, passed after the parameters
  bool cooperative = false;                // T.sync_grid: every block resident (cuLaunchCooperativeKernel)
  std::array<int64_t, 3> cluster{1, 1, 1};  // T.ClusterKernel: blocks per cluster (CUDA __cluster_dims__)

  /// Checks every argument against the signature (dtype, rank, shape, device, strides), binding
  /// the symbols; throws UserError(kArgument) naming the parameter. `device`: "cpu", "cuda", "any"
  /// or another device type the backend runs on. Parameters in `skip` (outputs still to be
  /// allocated) take no argument. Returns the symbols' values.
  std::vector<int64_t> Check(const std::vector<TensorArg>& args, const std::vector<int>& skip,
                             const std::string& device) const;
  /// Shapes of parameters `out_idx` once the other arguments bind the symbols.
  std::vector<std::vector<int64_t>> OutputShapes(const std::vector<TensorArg>& inputs,
                                                 const std::vector<int>& out_idx) const;
  /// Blocks per dimension (three) for the symbols' values and the arguments (integer scalars).
  std::vector<int64_t> Grid(const std::vector<int64_t>& sym_values, const std::vector<TensorArg>& args) const;
  /// The argument label of messages: "argument 3 ('beta') of kernel 'axpb'".
  std::string Label(size_t i) const;
};

}  // namespace tl
