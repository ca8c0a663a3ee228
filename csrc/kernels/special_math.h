// Special functions of the unary and binary families (digamma, trigamma, polygamma, Hurwitz
// zeta, erfinv, the modified Bessel functions I0 and I1, erfcx, log_ndtr, the spherical j0),
// from their series and asymptotic expansions, in double: the host libm and CUDA's have no
// common version of them, and double keeps a float result within a rounding of the true value.
// The edge values (poles, domain errors) are ATen's.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/macros.h"

namespace accel::kernels {

constexpr double kPi = 3.141592653589793;

// zeta(s, q) = sum_k (q + k)^-s by Euler-Maclaurin summation: the terms with q + k < 9 (at
// least nine) directly, the rest as the integral plus Bernoulli corrections B_2j / (2j)!.
ACCEL_HD inline double hurwitzZeta(double s, double q) {
  if (s == 1) return INFINITY;
  if (s < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    if (s != floor(s)) return NAN;  // a negative base only to an integer power
  }
  double sum = 0, a = q;
  for (int k = 0; k < 9 || a < 9; ++k) {
    const double term = pow(a, -s);
    sum += term;
    a += 1;
    if (fabs(term) <= 1e-17 * fabs(sum)) return sum;
  }
  constexpr double kB[] = {1.0 / 12,          -1.0 / 720,
                           1.0 / 30240,       -1.0 / 1209600,
                           1.0 / 47900160,    -691.0 / 1307674368000,
                           1.0 / 74724249600, -3617.0 / 10670622842880000};
  const double inv_a2 = 1 / (a * a);
  double rising = s * pow(a, -s - 1);  // s (s+1) ... (s+2j-2) a^(-s-2j+1), for j = 1
  double tail = pow(a, 1 - s) / (s - 1) + 0.5 * pow(a, -s);
  for (int j = 0; j < 8; ++j) {
    tail += kB[j] * rising;
    rising *= (s + 2 * j + 1) * (s + 2 * j + 2) * inv_a2;
  }
  return sum + tail;
}

// psi(x): reflected below 0 (with the fractional part of x, for an accurate tan), raised to
// x >= 10 by psi(x) = psi(x + 1) - 1/x, then the asymptotic series in 1/x^2.
ACCEL_HD inline double digamma(double x) {
  if (x == 0) return copysign(INFINITY, -x);
  double result = 0;
  if (x < 0) {
    if (x == trunc(x)) return NAN;
    const double frac = x - trunc(x);
    result = -kPi / tan(kPi * frac);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double z = 1 / (x * x);
  const double series =
      z * (1.0 / 12 -
           z * (1.0 / 120 -
                z * (1.0 / 252 -
                     z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return result + log(x) - 0.5 / x - series;
}

// psi'(x) = zeta(2, x), reflected below 1/2: psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x).
ACCEL_HD inline double trigamma(double x) {
  if (x < 0.5) {
    const double s = sin(kPi * x);
    return kPi * kPi / (s * s) - hurwitzZeta(2, 1 - x);
  }
  return hurwitzZeta(2, x);
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2.
ACCEL_HD inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  const double sign = n % 2 ? 1.0 : -1.0;
  return sign * exp(lgamma(n + 1.0)) * hurwitzZeta(static_cast<double>(n + 1), x);
}

// erfinv: Winitzki's closed-form estimate (relative error < 2e-3), then Newton steps, on
// erfc above 1/2 so that the tail keeps its relative precision.
ACCEL_HD inline double erfinv(double y) {
  const double ay = fabs(y);
  if (ay > 1 || y != y) return NAN;
  if (ay == 1) return copysign(INFINITY, y);
  if (ay == 0) return y;
  constexpr double kA = 0.147, kTwoOverSqrtPi = 1.1283791670955126;
  const double w = log1p(-ay * ay);
  const double t = 2 / (kPi * kA) + 0.5 * w;
  double x = sqrt(sqrt(t * t - w / kA) - t);
  for (int i = 0; i < 4; ++i) {
    const double f = ay > 0.5 ? (1 - ay) - erfc(x) : erf(x) - ay;
    x -= f / (kTwoOverSqrtPi * exp(-x * x));  // f = erf(x) - |y| either way
  }
  return copysign(x, y);
}

// I_nu(x) for nu = 0 or 1, times e^-|x| when scaled: the power series
// sum_k (x/2)^(2k+nu) / (k! (k+nu)!) up to |x| = 30, beyond it Hankel's expansion
// e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (4 nu^2 - (2j-1)^2) / (k! (8x)^k).
ACCEL_HD inline double besselI(int nu, double x, bool scaled) {
  const double ax = fabs(x);
  double r;
  if (ax != ax) return x;
  if (ax == INFINITY) {
    r = scaled ? 0.0 : NAN;  // ATen's (CPU's and CUDA's) value at infinity
  } else if (ax <= 30) {
    const double q = 0.25 * ax * ax;
    double term = nu ? 0.5 * ax : 1.0, sum = term;
    for (int k = 1; k < 200 && term > 1e-17 * sum; ++k) {
      term *= q / (k * (k + nu));
      sum += term;
    }
    r = scaled ? sum * exp(-ax) : sum;
  } else {
    const double mu = 4.0 * nu * nu;
    double term = 1, sum = 1;
    for (int k = 1; k < 30 && fabs(term) > 1e-17 * fabs(sum); ++k) {
      const double odd = 2.0 * k - 1;
      term *= -(mu - odd * odd) / (8.0 * k * ax);
      sum += term;
    }
    const double log_base = log(sum) - 0.5 * log(2 * kPi * ax);
    r = scaled ? exp(log_base) : exp(ax + log_base);
  }
  return nu == 1 && x < 0 ? -r : r;
}

// erfcx(x) = e^(x^2) erfc(x): directly where both factors are finite, and the asymptotic
// series 1 / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - ...) beyond x = 25.
ACCEL_HD inline double erfcx(double x) {
  if (x < 25) return x < -26.7 ? INFINITY : exp(x * x) * erfc(x);
  constexpr double kInvSqrtPi = 0.5641895835477563;
  const double z = 1 / (2 * x * x);
  return kInvSqrtPi / x * (1 - z * (1 - 3 * z * (1 - 5 * z * (1 - 7 * z))));
}

// log of the standard normal CDF, Phi(x) = erfc(-x / sqrt 2) / 2: through erfcx in the lower
// tail (where Phi underflows), log1p of the complement above -1.
ACCEL_HD inline double logNdtr(double x) {
  constexpr double kSqrtHalf = 0.7071067811865476;
  if (x < -1) return log(0.5 * erfcx(-x * kSqrtHalf)) - 0.5 * x * x;
  return log1p(-0.5 * erfc(x * kSqrtHalf));
}

// sin(x) / x, by its Taylor series near 0.
ACCEL_HD inline double sphericalBesselJ0(double x) {
  if (fabs(x) == INFINITY) return 0;
  if (fabs(x) < 0.5) {
    const double z = x * x;
    return 1 - z / 6 * (1 - z / 20 * (1 - z / 42 * (1 - z / 72 * (1 - z / 110))));
  }
  return sin(x) / x;
}

// Bessel functions of the first and second kind, orders 0 and 1 (libm's and CUDA's j0, j1, y0,
// y1); y is -inf at 0 and nan below, and both are nan at infinity, as ATen's.
ACCEL_HD inline double besselJ(int nu, double x) {
  if (fabs(x) == INFINITY) return NAN;
  return nu ? ::j1(x) : ::j0(x);
}
ACCEL_HD inline double besselY(int nu, double x) {
  if (x == 0) return -INFINITY;
  if (x < 0 || x == INFINITY) return NAN;
  return nu ? ::y1(x) : ::y0(x);
}

}  // namespace accel::kernels
