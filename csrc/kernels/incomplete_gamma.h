// The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P (igamma, igammac), and
// the derivative of a Gamma(a, 1) sample x in a at fixed P (the reparameterized gradient of
// _standard_gamma, which Gamma, Beta, Chi2 and Dirichlet rsample use). In double, for every
// dtype: each tail is computed directly where it is the small one, so neither is 1 minus a
// number near 1. Knows no torch.
//
// - x < a + 1: P's power series, P = x^a e^-x / Gamma(a + 1) * S, S = sum_n x^n / ((a+1)..(a+n)).
// - x >= a + 1: Q's continued fraction (modified Lentz), Q = x^a e^-x / Gamma(a) * h.
// - Small a in the series region, where P is near 1: Q from P's other series,
//   Q = -expm1(a log x - lgamma(1 + a)) - x^a / Gamma(a) * sum_{k>=1} (-x)^k / (k! (a + k)).
//
// The gradient differentiates S or h in a alongside (forward mode, a value and its derivative
// per step), so no step size and no cancellation of two evaluations: with p(x) the density,
// dx/da = -dP/da / p(x) = -(x / a) (S (log x - psi(a + 1)) + dS/da)   (series), and
//         dx/da =  dQ/da / p(x) =  x (h (log x - psi(a)) + dh/da)     (continued fraction).
// CPU's _standard_gamma_grad is a fitted approximation, up to 8e-4 (relative) from this.
#pragma once

#include <cmath>

#include "kernels/macros.h"
#include "kernels/special_math.h"

namespace accel::kernels {

// A value and its derivative in a.
struct DualA {
  double v, d;
  ACCEL_HD DualA operator+(DualA o) const { return {v + o.v, d + o.d}; }
  ACCEL_HD DualA operator*(DualA o) const { return {v * o.v, d * o.v + v * o.d}; }
  ACCEL_HD DualA operator/(DualA o) const { return {v / o.v, (d * o.v - v * o.d) / (o.v * o.v)}; }
};

constexpr int kIncompleteGammaSteps = 100000;  // a bound only: convergence ends the loops
constexpr double kIncompleteGammaEps = 2e-16;

// S(a, x) = sum_n x^n / ((a+1)..(a+n)) and its derivative in a.
ACCEL_HD inline DualA gammaSeries(double a, double x) {
  DualA term{1, 0}, sum{1, 0};
  for (int n = 1; n < kIncompleteGammaSteps; ++n) {
    term = term * DualA{x, 0} / DualA{a + n, 1};
    sum = sum + term;
    if (std::fabs(term.v) <= sum.v * kIncompleteGammaEps &&
        std::fabs(term.d) <= (std::fabs(sum.d) + sum.v) * kIncompleteGammaEps)
      break;
  }
  return sum;
}

// h(a, x) = 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) and its
// derivative in a, by the modified Lentz method (Numerical Recipes' form of Q's fraction).
ACCEL_HD inline DualA gammaFraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  auto guard = [](DualA t) { return std::fabs(t.v) < kTiny ? DualA{kTiny, t.d} : t; };
  DualA b{x + 1 - a, -1};
  DualA c{1 / kTiny, 0};
  DualA d = DualA{1, 0} / guard(b);
  DualA h = d;
  for (int i = 1; i < kIncompleteGammaSteps; ++i) {
    const DualA an{-i * (i - a), static_cast<double>(i)};
    b = b + DualA{2, 0};
    d = DualA{1, 0} / guard(an * d + b);
    c = guard(b + an / c);
    const DualA step = d * c;
    h = h * step;
    if (std::fabs(step.v - 1) <= 2 * kIncompleteGammaEps &&
        std::fabs(h.v * step.d) <= (std::fabs(h.d) + std::fabs(h.v)) * kIncompleteGammaEps)
      break;
  }
  return h;
}

// lgamma(1 + a), accurate for tiny a, where 1 + a rounds to 1.
ACCEL_HD inline double lgamma1p(double a) {
  if (std::fabs(a) >= 1e-8) return std::lgamma(1 + a);
  constexpr double kEulerGamma = 0.5772156649015329;
  return -kEulerGamma * a + kPi * kPi / 12 * a * a;
}

// Q for small a and x < 2 (P's series about a = 0, DLMF 8.7.3).
ACCEL_HD inline double gammaQSmallA(double a, double x) {
  double term = 1, sum = 0;
  for (int k = 1; k < kIncompleteGammaSteps; ++k) {
    term *= -x / k;
    const double add = term / (a + k);
    sum += add;
    if (std::fabs(add) <= std::fabs(sum) * kIncompleteGammaEps) break;
  }
  const double log_xa = a * std::log(x);
  return -std::expm1(log_xa - lgamma1p(a)) - std::exp(log_xa - std::lgamma(a)) * sum;
}

// P(a, x) (upper = false) or Q(a, x) (upper = true), with ATen's edge values: NaN for a or x
// negative or NaN, for a = x = 0 and for a = x = inf; P = 1 for a = 0 or x = inf; P = 0 for
// x = 0 or a = inf.
ACCEL_HD inline double incompleteGamma(double a, double x, bool upper) {
  if (!(a >= 0) || !(x >= 0) || (a == 0 && x == 0) || (std::isinf(a) && std::isinf(x))) return NAN;
  double p;
  if (a == 0 || std::isinf(x)) {
    p = 1;
  } else if (x == 0 || std::isinf(a)) {
    p = 0;
  } else if (x < a + 1) {
    p = std::exp(a * std::log(x) - x - lgamma1p(a)) * gammaSeries(a, x).v;
    if (p > 0.5 && a < 1) {
      const double q = gammaQSmallA(a, x);
      return upper ? q : 1 - q;
    }
  } else {
    const double q = std::exp(a * std::log(x) - x - std::lgamma(a)) * gammaFraction(a, x).v;
    return upper ? q : 1 - q;
  }
  return upper ? 1 - p : p;
}

// d x / d a for a sample x of Gamma(a, 1): ATen's edge values (NaN for a <= 0, x = inf or a
// NaN; 0 for x = 0).
ACCEL_HD inline double standardGammaGrad(double a, double x) {
  if (!(a > 0) || !(x >= 0) || std::isinf(x)) return NAN;
  if (x == 0) return 0;
  const double log_x = std::log(x);
  if (x < a + 1) {
    const DualA s = gammaSeries(a, x);
    return -(x / a) * (s.v * (log_x - digamma(a + 1)) + s.d);
  }
  const DualA h = gammaFraction(a, x);
  return x * (h.v * (log_x - digamma(a)) + h.d);
}

}  // namespace accel::kernels
