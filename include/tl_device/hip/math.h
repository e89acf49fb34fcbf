// Elementary functions for AMD targets built without the ROCm device libraries (gfx950: the clang that
// knows it, ziglang's, has no ocml). The AMDGPU backend itself lowers the float32 exp / exp2 / log / log2 /
// log10 / sqrt and the rounding functions of both widths to correctly handled instruction sequences; what it
// does not lower (float64 exp / log / sin / cos, and tanh / erf / pow of either width) is written here from
// textbook methods: Cody-Waite argument reduction with Taylor polynomials, the atanh series of log in
// double-double, a positive series and a continued fraction for erf. Only __builtin_* functions are used, so
// the same code compiles for the host (tests/cpp/test_hip_math.cc measures its error against the C library in
// ulps).
//
// Accuracy against the C library, as tests/cpp/test_hip_math.cc asserts it on 200000 seeded arguments per
// function and range (in brackets the largest error a sweep of 20 million arguments each found): float64 exp,
// exp2, log, log2, log10 within 2 ulp [1]; sin, cos within 3 ulp for |x| < 10 [2] and 4 ulp for |x| < 1e5 [3]
// (Cody-Waite reduction; beyond, its error grows with |x|); tanh within 5 ulp [4]; erf within 14 ulp [12]
// (the series' roundings near |x| = 1.5); pow within 2 ulp of C on ordinary arguments, exact integer powers
// up to 64 where the result is representable, its relative error otherwise under 4e-16 (1 + |b log a|).
// float32: sin, cos, erf within 1 ulp of the correctly rounded result [0, 1], tanh within 4 ulp [3].
#pragma once

#ifndef TL_DEV
#define TL_DEV inline
#endif

namespace tl {
namespace hipmath {

// ---- float64 -------------------------------------------------------------------------------------
constexpr double kLn2Hi = 0.6931471806019545;       // ln 2 in 32 bits: k * kLn2Hi is exact for |k| < 2^21
constexpr double kLn2Lo = -4.2009150726810846e-11;  // ln 2 - kLn2Hi
constexpr double kLog2e = 1.4426950408889634;
constexpr double kPio2a = 1.5707963267341256;  // pi / 2 in three parts of 33, 33 and 53 bits
constexpr double kPio2b = 6.077100506303966e-11;
constexpr double kPio2c = 2.0222662487959506e-21;
constexpr double k2oPi = 0.6366197723675814;

// e^r for |r| <= ln2 / 2 (+ rounding): the Taylor polynomial to r^13 (remainder < 1e-17).
TL_DEV double exp_reduced(double r) {
  double p = 1.0 / 6227020800.0;  // 1 / 13!
  const double inv[] = {1.0 / 479001600.0,
                        1.0 / 39916800.0,
                        1.0 / 3628800.0,
                        1.0 / 362880.0,
                        1.0 / 40320.0,
                        1.0 / 5040.0,
                        1.0 / 720.0,
                        1.0 / 120.0,
                        1.0 / 24.0,
                        1.0 / 6.0,
                        0.5,
                        1.0,
                        1.0};
  for (double c : inv) p = __builtin_fma(p, r, c);
  return p;
}

TL_DEV double exp_f64(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return __builtin_inf();
  if (x < -745.1332191019412) return 0.0;
  double k = __builtin_rint(x * kLog2e);
  double r = __builtin_fma(-k, kLn2Lo, __builtin_fma(-k, kLn2Hi, x));
  return __builtin_ldexp(exp_reduced(r), static_cast<int>(k));
}

TL_DEV double exp2_f64(double x) {
  if (x != x) return x;
  if (x >= 1024.0) return __builtin_inf();
  if (x < -1075.0) return 0.0;
  double k = __builtin_rint(x);
  return __builtin_ldexp(exp_reduced((x - k) * 0.6931471805599453), static_cast<int>(k));
}

// e^y - 1 without the cancellation near 0 (Taylor to y^17 for |y| < 1/2).
TL_DEV double expm1_f64(double y) {
  if (__builtin_fabs(y) >= 0.5) return exp_f64(y) - 1.0;
  double p = 1.0 / 355687428096000.0;  // 1 / 17!
  double f = 355687428096000.0;
  for (int n = 16; n >= 1; --n) {
    f /= n + 1;  // n!
    p = __builtin_fma(p, y, 1.0 / f);
  }
  return p * y;
}

// log x as an unevaluated sum hi + lo (about 2^-70 relative): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// log m = 2 atanh(s), s = (m - 1) / (m + 1) carried to twice the precision, the series to s^23 (|s| < 0.1716,
// remainder < 1e-18). For finite x > 0.
TL_DEV void log_dd(double x, double* hi, double* lo) {
  int e;
  double m = __builtin_frexp(x, &e);  // x = m 2^e, m in [1/2, 1)
  if (m < 0.7071067811865476) {
    m *= 2.0;
    --e;
  }
  double f = m - 1.0;                      // exact
  double d = m + 1.0, dl = m - (d - 1.0);  // m + 1 = d + dl exactly
  double s = f / d;
  double sl = (__builtin_fma(-s, d, f) - s * dl) / d;  // f / (d + dl) = s + sl
  double s2 = s * s, p = 1.0 / 23.0;
  for (int n = 21; n >= 3; n -= 2) p = __builtin_fma(p, s2, 1.0 / n);
  // log m = 2 s + 2 sl + 2 s^3 p;  log x = e ln2 + log m
  double de = static_cast<double>(e), a = de * kLn2Hi, b = 2.0 * s;  // both exact
  double h = a + b, t = (a - h) + b;                                 // two-sum (|a| >= |b| or a = 0)
  if (__builtin_fabs(b) > __builtin_fabs(a)) t = (b - h) + a;
  double r = t + (__builtin_fma(de, kLn2Lo, 2.0 * sl) + 2.0 * s * s2 * p);
  *hi = h + r;  // renormalised: |lo| <= ulp(hi) / 2
  *lo = r - (*hi - h);
}

// (hi + lo) * (c + cl), rounded once at the end.
TL_DEV double mul_dd(double hi, double lo, double c, double cl) {
  double p = hi * c, pe = __builtin_fma(hi, c, -p);
  return p + (pe + __builtin_fma(hi, cl, lo * c));
}

// log x times c (c + cl, a constant to twice the precision: 1, log2 e, log10 e), with log's special cases
// (NaN, +inf, x < 0: NaN, 0: -inf; the factors are positive).
TL_DEV double log_times(double x, double c, double cl) {
  if (x != x || x == __builtin_inf()) return x;
  if (x < 0.0) return __builtin_nan("");
  if (x == 0.0) return -__builtin_inf();
  double hi, lo;
  log_dd(x, &hi, &lo);
  return cl == 0.0 ? hi + lo : mul_dd(hi, lo, c, cl);
}
TL_DEV double log_f64(double x) { return log_times(x, 1.0, 0.0); }
TL_DEV double log2_f64(double x) { return log_times(x, kLog2e, 2.0355273740931033e-17); }
TL_DEV double log10_f64(double x) { return log_times(x, 0.4342944819032518, 1.098319650216765e-17); }

// sin and cos of r in [-pi/4, pi/4] (Taylor to r^17 / r^18).
TL_DEV double sin_reduced(double r) {
  double r2 = r * r, p = 1.0 / 355687428096000.0, f = 355687428096000.0;  // 1 / 17!
  for (int n = 15; n >= 1; n -= 2) {
    f /= (n + 1) * (n + 2);
    p = __builtin_fma(p, -r2, 1.0 / f);
  }
  return p * r;
}
TL_DEV double cos_reduced(double r) {
  double r2 = r * r, p = 1.0 / 6402373705728000.0, f = 6402373705728000.0;  // 1 / 18!
  for (int n = 16; n >= 0; n -= 2) {
    f /= (n + 1) * (n + 2);
    p = __builtin_fma(p, -r2, 1.0 / f);
  }
  return p;
}
// x = k pi/2 + r (Cody-Waite, three parts of pi/2: r keeps its accuracy while |k| < 2^20).
TL_DEV double reduce_pio2(double x, int* quadrant) {
  double k = __builtin_rint(x * k2oPi);
  *quadrant = static_cast<int>(static_cast<long long>(k) & 3);
  return __builtin_fma(-k, kPio2c, __builtin_fma(-k, kPio2b, __builtin_fma(-k, kPio2a, x)));
}
TL_DEV double sin_f64(double x) {
  if (x != x || __builtin_fabs(x) == __builtin_inf()) return __builtin_nan("");
  int q;
  double r = reduce_pio2(x, &q);
  double v = (q & 1) ? cos_reduced(r) : sin_reduced(r);
  return (q & 2) ? -v : v;
}
TL_DEV double cos_f64(double x) {
  if (x != x || __builtin_fabs(x) == __builtin_inf()) return __builtin_nan("");
  int q;
  double r = reduce_pio2(x, &q);
  double v = (q & 1) ? sin_reduced(r) : cos_reduced(r);
  return (q == 1 || q == 2) ? -v : v;
}

TL_DEV double tanh_f64(double x) {
  if (x != x) return x;
  double a = __builtin_fabs(x);
  if (a > 22.0) return __builtin_copysign(1.0, x);
  double em = expm1_f64(2.0 * a);
  return __builtin_copysign(em / (em + 2.0), x);
}

// e^(-a^2) with a^2 carried exactly (a^2 = hi + lo).
TL_DEV double exp_neg_square(double a) {
  double hi = a * a, lo = __builtin_fma(a, a, -hi);
  return exp_f64(-hi) * (1.0 - lo);
}
// erf a for a >= 0: below 1.5, 2/sqrt(pi) a e^(-a^2) sum_n (2a^2)^n / (1 3 5 ... (2n+1)) (positive terms, no
// cancellation; at most `terms` of them); from 1.5 on, 1 - erfc a with erfc a = e^(-a^2) / sqrt(pi) / (a +
// (1/2) / (a + 1 / (a + (3/2) / (a + ...)))), the continued fraction evaluated from its `levels`-th level up
// (120 levels converge to float64 for a >= 1.5, 24 to float32).
TL_DEV double erf_abs(double a, int levels, int terms) {
  if (a >= 1.5) {
    double f = a;
    for (int k = levels; k >= 1; --k) f = a + (0.5 * k) / f;
    return 1.0 - exp_neg_square(a) / (1.7724538509055159 * f);
  }
  double t = 1.0, sum = 1.0, two = 2.0 * a * a;
  for (int n = 0; n < terms && t > sum * 1e-18; ++n) {
    t *= two / (2 * n + 3);
    sum += t;
  }
  return 1.1283791670955126 * a * exp_neg_square(a) * sum;
}
TL_DEV double erf_f64(double x) {
  if (x != x) return x;
  double a = __builtin_fabs(x);
  return __builtin_copysign(a >= 6.0 ? 1.0 : erf_abs(a, 120, 80), x);
}

TL_DEV bool is_odd_integer(double b) {
  return __builtin_fabs(b) < 9007199254740992.0 && __builtin_rint(b) == b &&
         __builtin_fmod(__builtin_fabs(b), 2.0) == 1.0;
}

// pow with C's special cases (pow(x, 0) = 1 and pow(1, y) = 1 even for NaN, negative bases with integer
// exponents, zeros and infinities); integer exponents up to 64 by squaring; otherwise e^(b log |a|).
TL_DEV double pow_f64(double a, double b) {
  if (b == 0.0 || a == 1.0) return 1.0;
  if (a != a || b != b) return a + b;
  const double inf = __builtin_inf();
  bool odd = is_odd_integer(b), integer = __builtin_fabs(b) >= 9007199254740992.0 || __builtin_rint(b) == b;
  if (a == 0.0) return b < 0 ? (odd ? __builtin_copysign(inf, a) : inf) : (odd ? a : 0.0);
  if (__builtin_fabs(b) == inf) {
    double m = __builtin_fabs(a);
    if (m == 1.0) return 1.0;
    return (m > 1.0) == (b > 0) ? inf : 0.0;
  }
  if (__builtin_fabs(a) == inf) {
    double v = b < 0 ? 0.0 : inf;
    return a < 0 && odd ? -v : v;
  }
  if (a < 0 && !integer) return __builtin_nan("");
  double m = __builtin_fabs(a), v;
  if (integer && __builtin_fabs(b) <= 64.0) {
    // small integer powers by squaring in double-double (two-product by fma): one rounding at the end
    int n = static_cast<int>(__builtin_fabs(b));
    double bh = m, bl = 0.0, vh = 1.0, vl = 0.0;
    auto mul = [](double xh, double xl, double yh, double yl, double* zh, double* zl) {
      double p = xh * yh, e = __builtin_fma(xh, yh, -p) + (xh * yl + xl * yh);
      *zh = p + e;
      *zl = e - (*zh - p);
    };
    for (; n; n >>= 1) {
      if (n & 1) mul(vh, vl, bh, bl, &vh, &vl);
      if (n > 1) mul(bh, bl, bh, bl, &bh, &bl);
    }
    if (b < 0) {  // 1 / (vh + vl), with one Newton correction
      double q = 1.0 / vh, r = __builtin_fma(-q, vh, 1.0) - q * vl;
      v = __builtin_fabs(vh) == __builtin_inf() ? 0.0 : q + q * r;
    } else {
      v = vh + vl;
    }
  } else {  // e^(b log m) with b log m carried to twice the precision
    double hi, lo;
    log_dd(m, &hi, &lo);
    double y = b * hi, ye = __builtin_fma(b, hi, -y) + b * lo;
    v = y > 709.782712893384 ? __builtin_inf() : exp_f64(y) * (1.0 + ye);
  }
  return a < 0 && odd ? -v : v;
}

// ---- float32: the backend's own exp / log (correctly handled), the rest here ---------------------
TL_DEV float expm1_f32(float y) {
  if (__builtin_fabsf(y) >= 0.5f) return __builtin_expf(y) - 1.0f;
  float p = 1.0f / 3628800.0f;  // Taylor to y^10
  const float c[] = {1.0f / 362880.0f, 1.0f / 40320.0f, 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f,
                     1.0f / 24.0f,     1.0f / 6.0f,     0.5f,           1.0f};
  for (float k : c) p = __builtin_fmaf(p, y, k);
  return p * y;
}
TL_DEV float tanh_f32(float x) {
  if (x != x) return x;
  float a = __builtin_fabsf(x);
  if (a > 9.0f) return __builtin_copysignf(1.0f, x);
  float em = expm1_f32(2.0f * a);
  return __builtin_copysignf(em / (em + 2.0f), x);
}
// sin / cos / erf / pow of float32 through the float64 forms (exact reduction, one rounding at the end).
TL_DEV float sin_f32(float x) { return static_cast<float>(sin_f64(x)); }
TL_DEV float cos_f32(float x) { return static_cast<float>(cos_f64(x)); }
// erf of float32 in float64 arithmetic with float32's needs: 1 from 4 on (erf 4 rounds to 1 in float32).
TL_DEV float erf_f32(float xf) {
  if (xf != xf) return xf;
  double a = __builtin_fabs(static_cast<double>(xf));
  return static_cast<float>(__builtin_copysign(a >= 4.0 ? 1.0 : erf_abs(a, 24, 32), static_cast<double>(xf)));
}
TL_DEV float pow_f32(float a, float b) { return static_cast<float>(pow_f64(a, b)); }

}  // namespace hipmath
}  // namespace tl
