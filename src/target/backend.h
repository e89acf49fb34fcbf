// The backend registry and the one compile entry point.
//
// A backend is what a target kind needs, end to end: its pass pipeline (tile program -> lowered
// program), its code generator, its toolchain (source -> binary, with the disk cache), its module
// loader (binary + LaunchSpec -> something that launches), the folder of its device headers and
// the fragment kinds its layouts use. Each lives in src/target/<kind>/ and is listed once in
// backends.cc. Compile() is the only way from a PrimFunc to a kernel: the JIT, the autotuner, the
// lower trace and the tools all call it, so what they show is what was built.
//
// docs/adding_a_backend.md lists what a new backend provides.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"
#include "runtime/launch_spec.h"
#include "runtime/module.h"
#include "runtime/runtime_module.h"
#include "target/gpu_features.h"
#include "target/target.h"
#include "transform/compile_info.h"
#include "transform/pass_config.h"
#include "transform/pass_registry.h"
#include "transform/pipeline.h"

namespace tl {

struct BuildOptions {
  std::string include_dir;   // where tl_device/ lives
  bool use_cache = true;     // the disk cache; TILELANG_DISABLE_CACHE=1 also turns it off
  std::string cache_dir;     // "" = $TILELANG_CACHE_DIR, else ~/.cache/tilelang-cpp
  bool build_binary = true;  // false: stop after code generation (the emulator needs no binary)
  bool trace = false;        // record the IR after every pass
};

/// A compiled binary, as bytes (it can travel to another machine) and, where the loader needs a
/// file, the path of its disk-cache entry.
struct Artifact {
  std::string format;  // "so" (a host shared library), "cubin"; "" when not built
  std::string binary;  // the bytes
  std::string path;    // the file on disk, or ""
  std::string text;    // an intermediate form users look at (PTX), or ""
  bool from_cache = false;
};

/// What Compile() returns.
struct CompiledKernel {
  Target target;
  PrimFunc func;       // the tile program as given
  PrimFunc lowered;    // after the backend's pipeline (thread-level IR on GPU kinds)
  std::string source;  // the generated code
  Artifact artifact;
  CompileInfo info;
  LaunchSpec launch;
  std::vector<PassRecord> trace;  // with BuildOptions::trace
};

struct Backend {
  std::string kind;                             // the Target kind it serves
  std::string header_dir;                       // include/tl_device/<header_dir>
  std::vector<std::string> fragment_kinds;      // the fragment layouts its lowering produces
  std::vector<std::string> execution_backends;  // names accepted for execution_backend; [0] is the default
  bool emulatable = false;                      // its lowered IR is thread-level: the emulator runs it
  bool fork_safe = true;  // its toolchain may run in a forked worker (the autotuner's pool)

  /// The target to build for: e.g. the arch of the device that will run it when none was named.
  std::function<Target(const Target&, bool will_run)> resolve;
  /// What its passes read for a target and the configs (for GPU kinds the GpuFeatures, the shared
  /// passes' only view of the target; GpuPassContext).
  std::function<PassContext(const Target&, const PassConfig&)> pass_context;
  /// The pass pipeline for that context (src/target/<kind>/pipeline.cc). Compile() runs it after
  /// FrontSteps(); the lower trace records it; the per-pass test hook runs its steps one at a time.
  std::function<Pipeline(const PassContext&)> pipeline;
  std::function<std::string(const PrimFunc& lowered, const Target&)> codegen;
  /// The symbol to launch in the binary.
  std::function<std::string(const PrimFunc& lowered)> entry;
  /// The toolchain: the kernel's source -> an artifact, through the disk cache.
  std::function<Artifact(const CompiledKernel&, const PassConfig&, const BuildOptions&, CompileInfo*)> build;
  /// The module loader.
  std::function<std::shared_ptr<RuntimeModule>(const CompiledKernel&)> load;
};

/// Adds a backend (a second one for a kind replaces the first: tests use it to stub a toolchain).
void RegisterBackend(Backend b);
/// The backend of a kind; a UserError(kUnsupported) that lists the available kinds when none.
const Backend& GetBackend(const std::string& kind);
std::vector<std::string> BackendKinds();

/// The one compile entry point: lower, generate and (with build_binary) build `f` for `target`.
/// `pass_configs` is parsed and checked here (unknown keys are errors that list the known ones).
CompiledKernel Compile(const PrimFunc& f, const Target& target,
                       const std::map<std::string, std::string>& pass_configs, const BuildOptions& opt);
/// Loads a compiled kernel with its backend's module loader.
std::shared_ptr<RuntimeModule> LoadModule(const CompiledKernel& k);

// The built-in backends (each defined in its folder; backends.cc registers them).
Backend CpuBackend();
Backend CudaBackend();
Backend OpenCLBackend();
Backend MetalBackend();
Backend HipBackend();
Backend AscendBackend();

}  // namespace tl
