// PassConfig: the typed pass configuration, parsed once from the user's `pass_configs` (string keys
// and values, after the front end has translated TileLang's keys). An unknown key or a value of the
// wrong type is a user error that lists the known keys.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace tl {

struct PassConfig {
  bool disable_barrier_insertion = false;  // "tl.disable_barrier_insertion" (race tests)
  bool user_sync_shared = false;  // "tl.user_sync_shared" (TileLang's TL_DISABLE_THREAD_STORAGE_SYNC): the
                                  // program orders its own shared buffers; compiler scratch keeps its barriers
  bool disable_async_copy = false;         // "tl.disable_async_copy": global->shared copies stay synchronous
  bool disable_tma_lower =
      false;  // "tl.disable_tma_lower" (TileLang's TL_DISABLE_TMA_LOWER): cp.async, not TMA
  bool disable_wgmma =
      false;  // "tl.disable_wgmma" (TileLang's TL_DISABLE_WGMMA): sm_90a T.gemm uses mma.sync
  bool disable_warp_specialized = false;   // "tl.disable_warp_specialized": no automatic producer warp group
  bool disable_tcgen05 = false;            // "tl.disable_tcgen05": T.gemm stays on mma.sync on sm_100a
  bool test_ws_skip_empty_arrive = false;  // "tl.test_ws_skip_empty_arrive": test hook, a deadlock
  bool test_ws_early_release = false;      // "tl.test_ws_early_release": test hook, a wgmma operand overwrite
  bool test_skip_fence_proxy = false;  // "tl.test_skip_fence_proxy_async": test hook, wgmma without the fence
  bool test_skip_ascend_sync = false;  // "tl.test_skip_ascend_sync": test hook, Ascend pipes without flags
  bool test_corrupt_mma_layout = false;  // "tl.test_corrupt_mma_layout": test hook, swaps accumulator columns
  bool emulator_check_races = true;      // "emulator.check_races"
  bool emulator_check_uninit = true;     // "emulator.check_uninit"
  bool emulator_check_shift_counts = true;  // "emulator.check_shift_counts": report shifts by >= width
  int emulator_subgroup_size = 32;          // "emulator.subgroup_size": the emulated OpenCL sub-group size
  bool emulator_subgroup_strided = false;   // "emulator.subgroup_strided": work-item t in sub-group t % count
  bool enable_fast_math = false;  // "tl.enable_fast_math" (TileLang's TL_ENABLE_FAST_MATH): CUDA --use_fast_math
  bool cuda_lineinfo = false;     // "cuda.lineinfo": NVRTC -lineinfo (.loc lines in the PTX; no code change)
  std::string cpu_compile_flags;            // "cpu.compile_flags": extra host-compiler flags
};

PassConfig ParsePassConfig(const std::map<std::string, std::string>& cfg);
/// The keys ParsePassConfig knows, sorted.
std::vector<std::string> PassConfigKeys();

}  // namespace tl
