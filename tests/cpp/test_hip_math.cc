// The device-library-free math of include/tl_device/hip/math.h (what gfx950 kernels call for float64 exp /
// log / sin / cos and for tanh / erf / pow), compiled for the host and measured against the C library in
// ulps on seeded random arguments, plus C's special cases. No AMD GPU runs here, so this is where its
// accuracy is checked; the header's claims (its first comment) are these bounds: one ulp above the largest
// error a 20-million-argument sweep of each found, so that no seed lands on a true maximum the sweep missed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "tl_device/hip/math.h"

namespace {

using namespace tl::hipmath;

int64_t Ordered(double x) {
  int64_t i;
  std::memcpy(&i, &x, 8);
  return i < 0 ? std::numeric_limits<int64_t>::min() - i : i;
}
int64_t Ordered(float x) {
  int32_t i;
  std::memcpy(&i, &x, 4);
  return i < 0 ? std::numeric_limits<int32_t>::min() - i : i;
}
template <typename T>
int64_t Ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  int64_t d = Ordered(a) - Ordered(b);
  return d < 0 ? -d : d;
}

uint32_t Seed() {
  uint32_t s = std::random_device{}();
  std::printf("seed %u\n", s);
  return s;
}

// The largest ulp distance between f and ref over n arguments drawn by `draw`.
template <typename T, typename D>
int64_t MaxUlps(const std::function<T(T)>& f, const std::function<T(T)>& ref, D draw, int n, T* worst) {
  std::mt19937_64 g(Seed());
  int64_t m = 0;
  for (int i = 0; i < n; ++i) {
    T x = static_cast<T>(draw(g));
    int64_t u = Ulps(f(x), ref(x));
    if (u > m) {
      m = u;
      *worst = x;
    }
  }
  return m;
}

std::function<double(std::mt19937_64&)> Uniform(double lo, double hi) {
  return [=](std::mt19937_64& g) { return std::uniform_real_distribution<double>(lo, hi)(g); };
}
// |x| spread over many binades: sign * 2^u
std::function<double(std::mt19937_64&)> Binades(double lo_exp, double hi_exp, bool sign) {
  return [=](std::mt19937_64& g) {
    double x = std::exp2(std::uniform_real_distribution<double>(lo_exp, hi_exp)(g));
    return sign && (g() & 1) ? -x : x;
  };
}

#define EXPECT_ULPS(F, REF, DRAW, BOUND)                        \
  do {                                                          \
    double worst = 0;                                           \
    int64_t u = MaxUlps<double>(F, REF, DRAW, 200000, &worst);  \
    EXPECT_LE(u, BOUND) << #F " at " << std::hexfloat << worst; \
  } while (0)
#define EXPECT_ULPS_F(F, REF, DRAW, BOUND)                                                    \
  do {                                                                                        \
    float worst = 0;                                                                          \
    int64_t u = MaxUlps<float>(                                                               \
        F, [](float x) { return static_cast<float>(REF(double(x))); }, DRAW, 200000, &worst); \
    EXPECT_LE(u, BOUND) << #F " at " << std::hexfloat << worst;                               \
  } while (0)

double Exp(double x) { return std::exp(x); }
double Exp2(double x) { return std::exp2(x); }
double Log(double x) { return std::log(x); }
double Log2(double x) { return std::log2(x); }
double Log10(double x) { return std::log10(x); }
double Sin(double x) { return std::sin(x); }
double Cos(double x) { return std::cos(x); }
double Tanh(double x) { return std::tanh(x); }
double Erf(double x) { return std::erf(x); }

TEST(HipMath, Float64WithinAFewUlps) {
  EXPECT_ULPS(exp_f64, Exp, Uniform(-745, 709.7), 2);
  EXPECT_ULPS(exp_f64, Exp, Uniform(-1, 1), 2);
  EXPECT_ULPS(exp2_f64, Exp2, Uniform(-1074, 1023.9), 2);
  EXPECT_ULPS(log_f64, Log, Binades(-1074, 1023.9, false), 2);
  EXPECT_ULPS(log_f64, Log, Uniform(0.5, 2), 2);
  EXPECT_ULPS(log2_f64, Log2, Binades(-1074, 1023.9, false), 2);
  EXPECT_ULPS(log10_f64, Log10, Binades(-1074, 1023.9, false), 2);
  EXPECT_ULPS(sin_f64, Sin, Uniform(-10, 10), 3);
  EXPECT_ULPS(cos_f64, Cos, Uniform(-10, 10), 3);
  EXPECT_ULPS(sin_f64, Sin, Binades(-30, 16.6, true), 4);
  EXPECT_ULPS(cos_f64, Cos, Binades(-30, 16.6, true), 4);
  EXPECT_ULPS(tanh_f64, Tanh, Uniform(-25, 25), 5);
  EXPECT_ULPS(tanh_f64, Tanh, Binades(-60, 2, true), 5);
  EXPECT_ULPS(erf_f64, Erf, Uniform(-7, 7), 14);  // (the series' roundings near |x| = 1.5)
  EXPECT_ULPS(erf_f64, Erf, Binades(-60, 2, true), 14);
}

TEST(HipMath, Float32WithinAFewUlpsOfTheRoundedResult) {
  EXPECT_ULPS_F(tanh_f32, Tanh, Uniform(-12, 12), 4);
  EXPECT_ULPS_F(tanh_f32, Tanh, Binades(-40, 1, true), 4);
  EXPECT_ULPS_F(sin_f32, Sin, Uniform(-100, 100), 1);
  EXPECT_ULPS_F(cos_f32, Cos, Uniform(-100, 100), 1);
  EXPECT_ULPS_F(erf_f32, Erf, Uniform(-5, 5), 1);
}

TEST(HipMath, PowErrorGrowsOnlyWithTheExponentOfTheResult) {
  std::mt19937_64 g(Seed());
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    double a = std::exp2(std::uniform_real_distribution<double>(-30, 30)(g));
    double b = std::uniform_real_distribution<double>(-20, 20)(g);
    double ref = std::pow(a, b), got = pow_f64(a, b);
    double rel = std::fabs(got - ref) / ref / (1 + std::fabs(b * std::log(a)));
    worst = std::max(worst, rel);
  }
  EXPECT_LT(worst, 4e-16);
  for (float a : {0.5f, 2.0f, 3.0f, 10.0f, 1e-3f})
    for (float b : {-3.0f, -0.5f, 0.25f, 2.0f, 7.0f})
      EXPECT_LE(Ulps(pow_f32(a, b), static_cast<float>(std::pow(double(a), double(b)))), 1) << a << "^" << b;
}

TEST(HipMath, SpecialCasesAsInC) {
  const double inf = INFINITY, nan = NAN;
  for (double a : {-inf, -3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, inf, nan})
    for (double b : {-inf, -3.0, -2.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, inf, nan}) {
      double ref = std::pow(a, b), got = pow_f64(a, b);
      bool special = !std::isfinite(a) || !std::isfinite(b) || a == 0 || b == 0 || std::fabs(a) == 1 ||
                     std::rint(b) == b;  // exact (integer powers of these bases are exact)
      if (special)
        EXPECT_TRUE((std::isnan(ref) && std::isnan(got)) ||
                    (ref == got && std::signbit(ref) == std::signbit(got)))
            << "pow(" << a << ", " << b << ") = " << got << ", C says " << ref;
      else
        EXPECT_LE(Ulps(got, ref), 2) << "pow(" << a << ", " << b << ")";
    }
  EXPECT_EQ(exp_f64(inf), inf);
  EXPECT_EQ(exp_f64(-inf), 0.0);
  EXPECT_EQ(exp_f64(710), inf);
  EXPECT_TRUE(std::isnan(exp_f64(nan)));
  EXPECT_EQ(log_f64(0.0), -inf);
  EXPECT_EQ(log_f64(inf), inf);
  EXPECT_TRUE(std::isnan(log_f64(-1.0)));
  EXPECT_EQ(log_f64(1.0), 0.0);
  EXPECT_EQ(exp2_f64(-1074), std::ldexp(1.0, -1074));
  EXPECT_TRUE(std::isnan(sin_f64(inf)));
  EXPECT_TRUE(std::isnan(cos_f64(nan)));
  EXPECT_EQ(tanh_f64(-30.0), -1.0);
  EXPECT_EQ(erf_f64(-6.5), -1.0);
  EXPECT_EQ(tanh_f32(-0.0f), -0.0f);
  EXPECT_TRUE(std::signbit(tanh_f32(-0.0f)));
}

}  // namespace
