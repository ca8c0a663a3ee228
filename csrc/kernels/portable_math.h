// log, sin and cos from IEEE basic operations only (+ - * /, fma, sqrt, floor: correctly
// rounded on the host and on CUDA alike), for the random transforms: glibc's and CUDA's
// libraries differ in the last ulp, and a seeded run must draw bit-identical numbers on both
// drivers. Every multiply-add is an explicit fma, so no compiler contraction can differ.
// Accurate to a few double ulps on the ranges used (tests/cpp/kernels_random.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/macros.h"

namespace accel::kernels {

// log(x) for a finite normal x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), and
// log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its odd series in s.
ACCEL_HD inline double portableLog(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  double m;
  memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double p = 1.0 / 25.0;
  for (int k = 23; k >= 1; k -= 2) p = fma(p, s2, 1.0 / k);  // IEEE division: same both sides
  constexpr double kLn2Hi = 6.93147180369123816490e-01;      // ln 2 = hi + lo, hi's low bits 0
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double de = static_cast<double>(e);
  return fma(de, kLn2Hi, fma(de, kLn2Lo, (2.0 * s) * p));
}

// sin and cos of x in [0, 8): reduced by multiples of pi/2 to |r| <= pi/4, then Taylor series.
ACCEL_HD inline void portableSinCos(double x, double* sin_out, double* cos_out) {
  constexpr double kTwoOverPi = 6.36619772367581382433e-01;
  constexpr double kPiOver2Hi = 1.57079632673412561417e+00;  // pi/2 = hi + lo
  constexpr double kPiOver2Lo = 6.07710050650619224932e-11;
  const double k = floor(fma(x, kTwoOverPi, 0.5));
  const double r = fma(-k, kPiOver2Lo, fma(-k, kPiOver2Hi, x));
  const double r2 = r * r;
  // sin r = r (1 - r2/3! + r2^2/5! - ...), cos r = 1 - r2/2! + r2^2/4! - ..., by Horner.
  double ps = -8.22063524662433e-18;  // -1/19!
  ps = fma(ps, r2, 2.8114572543455206e-15);
  ps = fma(ps, r2, -7.647163731819816e-13);
  ps = fma(ps, r2, 1.6059043836821613e-10);
  ps = fma(ps, r2, -2.505210838544172e-08);
  ps = fma(ps, r2, 2.7557319223985893e-06);
  ps = fma(ps, r2, -0.0001984126984126984);
  ps = fma(ps, r2, 0.008333333333333333);
  ps = fma(ps, r2, -0.16666666666666666);
  ps = fma(ps, r2, 1.0);
  double pc = -1.5619206968586225e-16;  // -1/18!
  pc = fma(pc, r2, 4.779477332387385e-14);
  pc = fma(pc, r2, -1.1470745597729725e-11);
  pc = fma(pc, r2, 2.08767569878681e-09);
  pc = fma(pc, r2, -2.755731922398589e-07);
  pc = fma(pc, r2, 2.48015873015873e-05);
  pc = fma(pc, r2, -0.001388888888888889);
  pc = fma(pc, r2, 0.041666666666666664);
  pc = fma(pc, r2, -0.5);
  pc = fma(pc, r2, 1.0);
  const double s = r * ps, c = pc;
  switch (static_cast<int64_t>(k) & 3) {
    case 0: *sin_out = s, *cos_out = c; break;
    case 1: *sin_out = c, *cos_out = -s; break;
    case 2: *sin_out = -s, *cos_out = -c; break;
    default: *sin_out = -c, *cos_out = s; break;
  }
}

}  // namespace accel::kernels
