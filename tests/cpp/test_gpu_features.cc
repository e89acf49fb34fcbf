// Each GPU backend's GpuFeatures (src/target/gpu_features.h) are what its target says: the shared
// passes read only these, so a wrong feature here is a wrong kernel there.
#include <gtest/gtest.h>

#include "target/cuda/target.h"
#include "target/gpu_features.h"
#include "target/hip/target.h"
#include "target/metal/target.h"
#include "target/opencl/target.h"
#include "target/target.h"

namespace tl {
namespace {

GpuFeatures Cuda(const std::string& arch) { return CudaFeatures(ParseCudaTarget("cuda -arch=" + arch)); }

TEST(GpuFeatures, CudaAmpereHasCpAsyncAndMmaSyncButNoTma) {
  for (const char* arch : {"sm_80", "sm_86"}) {
    GpuFeatures f = Cuda(arch);
    EXPECT_EQ(f.name, "CUDA");
    EXPECT_EQ(f.arch, arch);
    EXPECT_EQ(f.matrix, MatrixUnit::kMmaSync);
    EXPECT_EQ(f.async_copy, AsyncCopy::kCpAsync);
    EXPECT_EQ(f.swizzle, SharedSwizzle::kXor);
    EXPECT_FALSE(f.tma);
    EXPECT_FALSE(f.wgmma);
    EXPECT_FALSE(f.fp8_mma);
    EXPECT_TRUE(f.shuffle);
    EXPECT_EQ(f.wave, 32);
  }
  EXPECT_EQ(Cuda("sm_80").smem_limit, 163 * 1024);
  EXPECT_EQ(Cuda("sm_86").smem_limit, 99 * 1024);
}

TEST(GpuFeatures, CudaAdaHasFp8Mma) {
  GpuFeatures f = Cuda("sm_89");
  EXPECT_TRUE(f.fp8_mma);
  EXPECT_FALSE(f.tma);
}

TEST(GpuFeatures, CudaHopperHasTmaAndSm90aHasWgmma) {
  GpuFeatures h = Cuda("sm_90"), a = Cuda("sm_90a");
  EXPECT_TRUE(h.tma);
  EXPECT_EQ(h.swizzle, SharedSwizzle::kTma);
  EXPECT_FALSE(h.wgmma);
  EXPECT_TRUE(a.tma);
  EXPECT_TRUE(a.wgmma);
  EXPECT_EQ(a.label, "sm_90a");
  EXPECT_EQ(a.smem_limit, 227 * 1024);
}

TEST(GpuFeatures, HipHasMfmaWave64AndNoTma) {
  for (const char* arch : {"gfx90a", "gfx942"}) {
    GpuFeatures f = HipFeatures(ParseTarget(std::string("hip -arch=") + arch));
    EXPECT_EQ(f.name, "HIP");
    EXPECT_EQ(f.arch, arch);
    EXPECT_EQ(f.matrix, MatrixUnit::kMfma);
    EXPECT_EQ(f.wave, 64);
    EXPECT_TRUE(f.shuffle);
    EXPECT_FALSE(f.tma);
    EXPECT_FALSE(f.wgmma);
    EXPECT_EQ(f.async_copy, AsyncCopy::kSynchronous);  // multi-stage LDS buffers, synchronous copies
    EXPECT_TRUE(f.vector_shared_stores);
    EXPECT_EQ(f.smem_limit, 64 * 1024);
  }
}

TEST(GpuFeatures, MetalHasSimdgroupMatricesAndNoSwizzle) {
  GpuFeatures f = MetalFeatures();
  EXPECT_EQ(f.name, "Metal");
  EXPECT_EQ(f.matrix, MatrixUnit::kSimdgroupMatrix);
  EXPECT_EQ(f.swizzle, SharedSwizzle::kNone);
  EXPECT_EQ(f.async_copy, AsyncCopy::kNone);
  EXPECT_TRUE(f.shuffle);
  EXPECT_FALSE(f.tma);
  EXPECT_FALSE(f.int_to_global_pointer);
  EXPECT_EQ(f.smem_limit, 32 * 1024);
}

TEST(GpuFeatures, OpenCLHasNoShufflesAndSubgroupReductionsOnlyWithTheFeature) {
  OpenCLLimits lim;
  GpuFeatures f = OpenCLFeatures(lim);
  EXPECT_EQ(f.name, "OpenCL");
  EXPECT_EQ(f.matrix, MatrixUnit::kNone);
  EXPECT_EQ(f.async_copy, AsyncCopy::kNone);
  EXPECT_FALSE(f.shuffle);
  EXPECT_FALSE(f.subgroup_reduce);
  EXPECT_EQ(f.subgroup_feature, "subgroups");
  EXPECT_FALSE(f.int_to_global_pointer);
  EXPECT_EQ(f.shared_memory_name, "local");
  EXPECT_EQ(f.smem_limit, lim.local_mem);
  EXPECT_EQ(f.max_threads, lim.max_work_group);
  lim.subgroups = ParseTarget("opencl -mattr=+subgroups").Has("subgroups");
  ASSERT_TRUE(lim.subgroups);
  GpuFeatures s = OpenCLFeatures(lim);
  EXPECT_TRUE(s.subgroup_reduce);
  EXPECT_FALSE(s.shuffle);
}

}  // namespace
}  // namespace tl
