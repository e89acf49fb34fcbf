// A software model of the AMX instructions the tile GEMM uses (ldtilecfg with palette 1, tilezero,
// tileloadd, tilestored, tdpbf16ps, tdpbssd, tilerelease), written from the Intel SDM's
// descriptions, as a `Tiles` policy for tl_cpu::detail::gemm_amx (gemm_amx.h). It lets the driver's
// packing, tiling and edge handling run on machines without AMX. Misuse the hardware would fault
// on (a tile used before configuration, shapes that do not chain) is counted in `faults`.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace amx_model {

struct Tile {
  int rows = 0, colsb = 0;
  alignas(64) uint8_t b[16][64] = {};
};

struct State {
  Tile t[8];
  bool configured = false;
  long faults = 0, dots = 0, loads = 0;
};

inline State& state() {
  thread_local State s;
  return s;
}

inline float bf16_value(uint16_t h) {
  // Like the instruction: subnormal inputs are read as zero (DAZ).
  if ((h & 0x7f80u) == 0) h &= 0x8000u;
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Tiles {
  static void configure() {
    State& s = state();
    for (Tile& t : s.t) {
      t = Tile{};
      t.rows = 16;
      t.colsb = 64;
    }
    s.configured = true;
  }
  static Tile& use(int i) {
    State& s = state();
    if (!s.configured) ++s.faults;
    return s.t[i];
  }
  static void zero(int i) {
    Tile& t = use(i);
    std::memset(t.b, 0, sizeof t.b);
  }
  static void load(int i, const void* p, long stride) {
    Tile& t = use(i);
    ++state().loads;
    for (int r = 0; r < t.rows; ++r)
      std::memcpy(t.b[r], static_cast<const char*>(p) + r * stride, size_t(t.colsb));
  }
  static void store(int i, void* p, long stride) {
    Tile& t = use(i);
    for (int r = 0; r < t.rows; ++r) std::memcpy(static_cast<char*>(p) + r * stride, t.b[r], size_t(t.colsb));
  }
  // dst.row[m].dword[n] += sum over k of the products of a.row[m]'s k-th dword group with
  // b.row[k]'s n-th dword group (2 bf16 or 4 int8 per dword).
  template <typename E>
  static void dp(int d, int a, int b) {
    Tile &D = use(d), &A = use(a), &B = use(b);
    ++state().dots;
    if (A.rows != D.rows || B.colsb != D.colsb || A.colsb / 4 != B.rows) ++state().faults;
    for (int m = 0; m < D.rows; ++m)
      for (int n = 0; n < D.colsb / 4; ++n) {
        if constexpr (std::is_same<E, uint16_t>::value) {
          float acc;
          std::memcpy(&acc, &D.b[m][4 * n], 4);
          for (int k = 0; k < A.colsb / 4; ++k) {
            uint16_t x[2], y[2];
            std::memcpy(x, &A.b[m][4 * k], 4);
            std::memcpy(y, &B.b[k][4 * n], 4);
            acc += bf16_value(x[0]) * bf16_value(y[0]);
            acc += bf16_value(x[1]) * bf16_value(y[1]);
          }
          std::memcpy(&D.b[m][4 * n], &acc, 4);
        } else {
          uint32_t acc;
          std::memcpy(&acc, &D.b[m][4 * n], 4);
          for (int k = 0; k < A.colsb / 4; ++k)
            for (int i = 0; i < 4; ++i)
              acc += uint32_t(int32_t(int8_t(A.b[m][4 * k + i])) * int32_t(int8_t(B.b[k][4 * n + i])));
          std::memcpy(&D.b[m][4 * n], &acc, 4);
        }
      }
  }

  static void zero_c() {
    for (int i = 0; i < 4; ++i) zero(i);
  }
  static void load_a(const void* a0, const void* a1, long stride) {
    load(4, a0, stride);
    load(5, a1, stride);
  }
  static void load_b(const void* b0, const void* b1, long stride) {
    load(6, b0, stride);
    load(7, b1, stride);
  }
  template <typename E>
  static void dot() {
    dp<E>(0, 4, 6);
    dp<E>(1, 4, 7);
    dp<E>(2, 5, 6);
    dp<E>(3, 5, 7);
  }
  static void store_c(void* c, long stride) {
    char* p = static_cast<char*>(c);
    store(0, p, stride);
    store(1, p + 64, stride);
    store(2, p + 16 * stride, stride);
    store(3, p + 16 * stride + 64, stride);
  }
  static void release() {
    State& s = state();
    for (Tile& t : s.t) t = Tile{};
    s.configured = false;
  }
};

}  // namespace amx_model
