// The CUDA lowering end to end in C++ (so that it also runs under ASan/UBSan): a tile-level GEMM
// built with the IR constructors is lowered (layouts, cp.async pipeline, ldmatrix/mma.sync,
// barriers, shared-memory plan), printed as CUDA, and executed by the emulator on random fp16
// inputs against a double reference; plus the compile-time errors the passes raise.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "emulator/emulator.h"
#include "emulator/numeric.h"
#include "layout/fragment.h"
#include "target/cuda/codegen_cuda.h"
#include "target/cuda/target.h"
#include "transform/gpu_options.h"
#include "tile_gemm_fixture.h"

namespace tl {
namespace {

struct Case {
  int64_t M, N, K, BM, BN, BK, threads, stages;
};

class CudaLoweringGemm : public ::testing::TestWithParam<Case> {};

TEST_P(CudaLoweringGemm, EmulatedResultMatchesDoubleReference) {
  Case c = GetParam();
  CompileInfo info;
  PrimFunc low = LowerForCUDA(TileGemm(c.M, c.N, c.K, c.BM, c.BN, c.BK, c.threads, c.stages),
                              ParseCudaTarget("cuda -arch=sm_80"), {}, &info);
  EXPECT_EQ(info.threads, c.threads);
  EXPECT_EQ(info.smem_bytes, c.stages * (c.BM * c.BK + c.BK * c.BN) * 2);
  EXPECT_TRUE(info.warnings.empty());
  std::string src = CodegenCUDA(low, "sm_80");
  for (const char* s : {"tl::cp_async<16>", "tl::ldmatrix<4, 0>", "tl::ldmatrix<4, 1>",
                        "tl::mma_m16n8k16_f16", "__syncthreads()"})
    EXPECT_NE(src.find(s), std::string::npos) << s;

  std::mt19937 rng(1234);
  std::normal_distribution<double> nd;
  std::vector<uint16_t> a(c.M * c.K), b(c.K * c.N);
  std::vector<double> ad(a.size()), bd(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = uint16_t(emu::EncodeMinifloat(nd(rng), 5, 10, false));
    ad[i] = emu::DecodeMinifloat(a[i], 5, 10, false);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = uint16_t(emu::EncodeMinifloat(nd(rng), 5, 10, false));
    bd[i] = emu::DecodeMinifloat(b[i], 5, 10, false);
  }
  std::vector<float> out(c.M * c.N, -12345.f);
  emu::Result r = emu::Run(low, {a.data(), b.data(), out.data()}, {}, emu::Options());
  for (auto& rep : r.reports) ADD_FAILURE() << rep.kind << ": " << rep.message;
  double worst = 0;
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < c.K; ++k) ref += ad[i * c.K + k] * bd[k * c.N + j];
      worst = std::max(worst, std::abs(ref - out[i * c.N + j]));
    }
  EXPECT_LT(worst, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaLoweringGemm,
                         ::testing::Values(Case{64, 64, 64, 64, 64, 32, 128, 2},    // whole tiles
                                           Case{72, 40, 48, 32, 32, 16, 64, 3},     // ragged M, N; 3 stages
                                           Case{32, 64, 96, 32, 64, 32, 128, 1}));  // no pipelining

TEST(CudaLowering, MissingBarriersAreRaces) {
  GpuOptions opt;
  opt.disable_barriers = true;
  CompileInfo info;
  PrimFunc low = LowerForCUDA(TileGemm(64, 64, 64, 64, 64, 32, 128, 2), ParseCudaTarget("sm_80"), opt, &info);
  std::vector<uint16_t> a(64 * 64, 0x3c00), b(64 * 64, 0x3c00);  // ones
  std::vector<float> out(64 * 64);
  emu::Result r = emu::Run(low, {a.data(), b.data(), out.data()}, {}, emu::Options());
  ASSERT_FALSE(r.reports.empty());
  EXPECT_EQ(r.reports[0].kind, "race");
  EXPECT_NE(r.reports[0].message.find("tile_gemm.py:7"), std::string::npos) << r.reports[0].message;
}

TEST(CudaLowering, SharedMemoryOverTheLimitIsAResourceError) {
  try {
    LowerForCUDA(TileGemm(1024, 1024, 1024, 256, 256, 64, 256, 4), ParseCudaTarget("sm_89"), {}, nullptr);
    FAIL() << "a 256 KB pipeline was accepted on sm_89";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
    std::string m = e.what();
    EXPECT_NE(m.find("101376-byte limit of sm_89"), std::string::npos) << m;
    EXPECT_NE(m.find("A_shared"), std::string::npos) << m;
  }
}

TEST(CudaLowering, GemmTileThatWarpsCannotSplitIsALayoutError) {
  // 24 rows cannot be split into 16-row mma tiles.
  try {
    LowerForCUDA(TileGemm(48, 64, 64, 24, 64, 32, 128, 1), ParseCudaTarget("sm_80"), {}, nullptr);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kLayout);
    EXPECT_NE(std::string(e.what()).find("24x64 accumulator cannot be split over 4 warps"), std::string::npos)
        << e.what();
  }
}

TEST(CudaLowering, SwizzleMakesLdmatrixRowsConflictFree) {
  // The 8 row addresses of one ldmatrix phase (8 rows, same 16-byte column chunk) must fall in 8
  // different 4-bank groups, for every chunk column and row block, for 32/64/128-element rows.
  for (int64_t cols : {32, 64, 128})
    for (int64_t r0 = 0; r0 < 64; r0 += 8)
      for (int64_t chunk = 0; chunk < cols / 8; ++chunk) {
        std::set<int64_t> groups;
        for (int64_t r = r0; r < r0 + 8; ++r)
          groups.insert((SwizzledOffsetInt(r, chunk * 8, cols, 2) * 2 / 16) % 8);
        EXPECT_EQ(groups.size(), 8u) << "cols " << cols << " rows " << r0 << " chunk " << chunk;
      }
  // and it is a permutation of each row's chunks
  for (int64_t r = 0; r < 16; ++r) {
    std::set<int64_t> seen;
    for (int64_t c = 0; c < 64; ++c) seen.insert(SwizzledOffsetInt(r, c, 64, 2));
    EXPECT_EQ(seen.size(), 64u);
    EXPECT_EQ(*seen.begin(), r * 64);
  }
}

}  // namespace
}  // namespace tl
