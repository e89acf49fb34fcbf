// The AMX tile GEMM driver (tl_device/cpu/gemm_amx.h) on a software model of the AMX instructions
// (amx_model.h), against a reference in double (bf16) or exact int64 (int8): ragged sizes, every
// transpose, C accumulated into and nothing outside M x N written. The model follows the SDM, so
// this checks the driver's packing (k pairs / quads in VNNI order), its tiling and its edges on
// any machine; the instructions themselves run in test_cpu_isa.py on a host with AMX.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "amx_model.h"
#include "tl_device/cpu/gemm.h"
#include "tl_device/cpu/gemm_amx.h"

namespace {

struct Case {
  int M, N, K;
};

// Ragged against the 32 x 32 C block, the 16-row tiles and the 32 (bf16) / 64 (int8) k per tile.
const Case kCases[] = {{1, 1, 1},    {16, 16, 32},  {32, 32, 64},  {33, 47, 65},
                       {70, 50, 41}, {5, 100, 129}, {128, 96, 128}};

template <typename E>
E random_value(std::mt19937& rng);

template <>
uint16_t random_value<uint16_t>(std::mt19937& rng) {
  // A normal bf16 in +-[0.5, 4): the top half of a float.
  std::uniform_real_distribution<float> d(0.5f, 4.f);
  float f = d(rng) * (rng() & 1 ? -1.f : 1.f);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16);
}

template <>
int8_t random_value<int8_t>(std::mt19937& rng) {
  return int8_t(int(rng() % 256) - 128);
}

double as_double(uint16_t h) { return double(amx_model::bf16_value(h)); }
double as_double(int8_t v) { return double(v); }

template <typename E, typename TC, bool TA, bool TB>
void check(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int M = c.M, N = c.N, K = c.K;
  const long lda = (TA ? M : K) + 3, ldb = (TB ? K : N) + 5, ldc = N + 7;  // padded strides
  std::vector<E> A(size_t(lda) * (TA ? K : M)), B(size_t(ldb) * (TB ? N : K));
  for (auto& x : A) x = random_value<E>(rng);
  for (auto& x : B) x = random_value<E>(rng);
  const TC sentinel = TC(-12345);
  std::vector<TC> C(size_t(ldc) * M, sentinel);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) C[i * ldc + j] = TC(int(rng() % 7) - 3);
  const std::vector<TC> C0 = C;

  amx_model::state() = amx_model::State{};
  tl_cpu::detail::gemm_amx<amx_model::Tiles, E, TA, TB, TC>(A.data(), lda, B.data(), ldb, C.data(), ldc, M, N,
                                                            K, tl_cpu::detail::gemm_scratch);
  const amx_model::State& s = amx_model::state();
  EXPECT_EQ(s.faults, 0) << "tiles used unconfigured or with shapes that do not chain";
  EXPECT_FALSE(s.configured) << "tilerelease missing";
  const int kt = 64 / int(sizeof(E));
  EXPECT_EQ(s.dots, 4L * ((M + 31) / 32) * ((N + 31) / 32) * ((K + kt - 1) / kt));

  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double ref = double(C0[i * ldc + j]);
      double mag = 0;
      for (int k = 0; k < K; ++k) {
        const double p =
            as_double(TA ? A[k * lda + i] : A[i * lda + k]) * as_double(TB ? B[j * ldb + k] : B[k * ldb + j]);
        ref += p;
        mag += std::fabs(p);
      }
      const double got = double(C[i * ldc + j]);
      if (std::is_same<TC, int32_t>::value) {
        ASSERT_EQ(got, ref) << "(" << i << ", " << j << ") of " << M << "x" << N << "x" << K << " TA=" << TA
                            << " TB=" << TB;
      } else {
        ASSERT_NEAR(got, ref, 1e-6 * mag + 1e-6)
            << "(" << i << ", " << j << ") of " << M << "x" << N << "x" << K << " TA=" << TA << " TB=" << TB;
      }
    }
    for (long j = N; j < ldc; ++j) ASSERT_EQ(C[i * ldc + j], sentinel) << "wrote outside N at row " << i;
  }
}

template <typename E, typename TC>
void check_all() {
  uint32_t seed = 1000;
  for (const Case& c : kCases) {
    std::printf("seed %u for %dx%dx%d\n", seed, c.M, c.N, c.K);
    check<E, TC, false, false>(c, seed++);
    check<E, TC, false, true>(c, seed++);
    check<E, TC, true, false>(c, seed++);
    check<E, TC, true, true>(c, seed++);
  }
}

TEST(AmxTileGemm, Bf16MatchesDoubleReferenceOnEveryTransposeAndRaggedSize) { check_all<uint16_t, float>(); }

TEST(AmxTileGemm, Int8MatchesExactReferenceOnEveryTransposeAndRaggedSize) { check_all<int8_t, int32_t>(); }

TEST(AmxTileGemm, ModelFollowsTheInstructionOnAHandWorkedTile) {
  // One 16 x 16 bf16 product with K = 32: A(m, k) = 1, B(k, n) = n for even k and 1 for odd k, so
  // each output is 16 n + 16. B in VNNI order: row k of the tile holds the pairs (B(2k, n), B(2k+1, n)).
  using amx_model::Tiles;
  alignas(64) uint16_t a[16 * 32], b[16 * 32];
  const uint16_t one = 0x3f80;
  for (auto& x : a) x = one;
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 16; ++n) {
      const float v = float(n);
      uint32_t u;
      std::memcpy(&u, &v, 4);
      b[k * 32 + 2 * n] = uint16_t(u >> 16);
      b[k * 32 + 2 * n + 1] = one;
    }
  alignas(64) float c[16 * 16];
  Tiles::configure();
  Tiles::zero(0);
  Tiles::load(4, a, 64);
  Tiles::load(6, b, 64);
  Tiles::dp<uint16_t>(0, 4, 6);
  Tiles::store(0, c, 64);
  Tiles::release();
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) ASSERT_EQ(c[m * 16 + n], 16.f * float(n) + 16.f) << m << "," << n;
  // A subnormal bf16 input counts as zero.
  EXPECT_EQ(amx_model::bf16_value(0x0001), 0.f);
  EXPECT_EQ(amx_model::bf16_value(0x3f80), 1.f);
}

}  // namespace
