// PassConfig parsing; see pass_config.h.
#include "transform/pass_config.h"

#include <stdexcept>

#include "support/error.h"

namespace tl {
namespace {

struct Key {
  const char* name;
  bool PassConfig::*flag;         // boolean keys
  std::string PassConfig::*text;  // string keys
  int PassConfig::*number;        // positive integer keys
};

const Key kKeys[] = {
    {"cpu.compile_flags", nullptr, &PassConfig::cpu_compile_flags, nullptr},
    {"emulator.check_races", &PassConfig::emulator_check_races, nullptr, nullptr},
    {"emulator.check_uninit", &PassConfig::emulator_check_uninit, nullptr, nullptr},
    {"emulator.check_shift_counts", &PassConfig::emulator_check_shift_counts, nullptr, nullptr},
    {"emulator.subgroup_size", nullptr, nullptr, &PassConfig::emulator_subgroup_size},
    {"emulator.subgroup_strided", &PassConfig::emulator_subgroup_strided, nullptr, nullptr},
    {"tl.disable_async_copy", &PassConfig::disable_async_copy, nullptr, nullptr},
    {"tl.disable_barrier_insertion", &PassConfig::disable_barrier_insertion, nullptr, nullptr},
    {"tl.disable_tma_lower", &PassConfig::disable_tma_lower, nullptr, nullptr},
    {"tl.user_sync_shared", &PassConfig::user_sync_shared, nullptr, nullptr},
    {"tl.disable_wgmma", &PassConfig::disable_wgmma, nullptr, nullptr},
    {"tl.disable_tcgen05", &PassConfig::disable_tcgen05, nullptr, nullptr},
    {"tl.enable_fast_math", &PassConfig::enable_fast_math, nullptr, nullptr},
    {"cuda.lineinfo", &PassConfig::cuda_lineinfo, nullptr, nullptr},
    {"tl.disable_warp_specialized", &PassConfig::disable_warp_specialized, nullptr, nullptr},
    {"tl.test_corrupt_mma_layout", &PassConfig::test_corrupt_mma_layout, nullptr, nullptr},
    {"tl.test_skip_fence_proxy_async", &PassConfig::test_skip_fence_proxy, nullptr, nullptr},
    {"tl.test_ws_early_release", &PassConfig::test_ws_early_release, nullptr, nullptr},
    {"tl.test_ws_skip_empty_arrive", &PassConfig::test_ws_skip_empty_arrive, nullptr, nullptr},
    {"tl.test_skip_ascend_sync", &PassConfig::test_skip_ascend_sync, nullptr, nullptr},
};

std::string KnownList() {
  std::string s;
  for (auto& k : kKeys) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace

std::vector<std::string> PassConfigKeys() {
  std::vector<std::string> out;
  for (auto& k : kKeys) out.push_back(k.name);
  return out;
}

PassConfig ParsePassConfig(const std::map<std::string, std::string>& cfg) {
  PassConfig pc;
  for (auto& [name, value] : cfg) {
    const Key* key = nullptr;
    for (auto& k : kKeys)
      if (name == k.name) key = &k;
    if (!key)
      throw UserError(ErrorKind::kArgument, "unknown pass config key '" + name + "'; the known keys are " +
                                                KnownList() + " (TileLang's keys: tilelang.PassConfigKey)");
    if (key->text) {
      pc.*(key->text) = value;
      continue;
    }
    if (key->number) {
      size_t used = 0;
      long v = 0;
      try {
        v = std::stol(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || v < 1 || v > (1 << 20))
        throw UserError(ErrorKind::kArgument,
                        "pass config '" + name + "' takes a positive integer, got '" + value + "'");
      pc.*(key->number) = static_cast<int>(v);
      continue;
    }
    if (value == "1" || value == "true" || value == "True") {
      pc.*(key->flag) = true;
    } else if (value == "0" || value == "false" || value == "False" || value.empty()) {
      pc.*(key->flag) = false;
    } else {
      throw UserError(ErrorKind::kArgument,
                      "pass config '" + name + "' takes a boolean, got '" + value + "'");
    }
  }
  return pc;
}

}  // namespace tl
