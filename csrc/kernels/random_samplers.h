// Samplers that draw an unbounded number of values per element (rejection): gamma
// (torch._standard_gamma, and through it Gamma, Beta, Dirichlet), Poisson and binomial. Each
// element has its own Philox stream: its counter, with the second counter word counting the
// calls, so an element's draws depend only on (seed, offset, element). Logs come from
// portable_math.h; exp and lgamma from the host's and CUDA's libraries, which agree to an ulp,
// so the two drivers draw the same values up to that rounding, not bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/macros.h"
#include "kernels/philox.h"
#include "kernels/portable_math.h"

namespace accel::kernels {

class ElementStream {
 public:
  ACCEL_HD ElementStream(uint64_t seed, uint64_t counter) : seed_(seed), counter_(counter) {}

  // (0, 1]: never 0, so its log is finite.
  ACCEL_HD double uniform() {
    if (used_ == 4) {
      block_ = philox(seed_, counter_, calls_++);
      used_ = 0;
    }
    const double u = uniformDouble(block_.x[used_], block_.x[used_ + 1]);
    used_ += 2;
    return 1.0 - u;
  }

  // Box-Muller, one value per pair of uniforms.
  ACCEL_HD double normal() {
    const double radius = sqrt(-2.0 * portableLog(uniform()));
    double s, c;
    portableSinCos(6.283185307179586 * (1.0 - uniform()), &s, &c);
    return radius * c;
  }

 private:
  uint64_t seed_, counter_;
  uint64_t calls_ = 0;
  Philox4 block_{};
  int used_ = 4;
};

// Gamma(alpha, 1): Marsaglia and Tsang's squeeze for alpha >= 1; below 1, Gamma(alpha + 1)
// times u^(1 / alpha). Results below the smallest normal number of `tiny` are raised to it,
// as ATen's samplers do (a Dirichlet's normalization then never divides zero by zero); NaN
// gives `tiny` too, infinity infinity.
ACCEL_HD inline double sampleGamma(double alpha, double tiny, ElementStream& s) {
  if (!(alpha > 0.0)) return tiny;
  if (std::isinf(alpha)) return alpha;
  double boost = 1.0;
  if (alpha < 1.0) {
    boost = exp(portableLog(s.uniform()) / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = s.normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = s.uniform();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 || portableLog(u) < 0.5 * x2 + d * (1.0 - v + portableLog(v))) {
      const double g = d * v * boost;
      return g < tiny ? tiny : g;
    }
  }
}

// Poisson(rate), rate >= 0 and finite (the op checks): multiplying uniforms until the product
// drops below e^-rate for small rates; Hormann's transformed rejection with squeeze (PTRS)
// from 10 on.
ACCEL_HD inline double samplePoisson(double rate, ElementStream& s) {
  if (rate <= 0.0) return 0.0;
  if (std::isinf(rate)) return rate;
  if (rate < 10.0) {
    const double limit = exp(-rate);
    double product = s.uniform(), k = 0.0;
    while (product > limit) {
      product *= s.uniform();
      k += 1.0;
    }
    return k;
  }
  const double sq = sqrt(rate), log_rate = portableLog(rate);
  const double b = 0.931 + 2.53 * sq;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = s.uniform() - 0.5;
    const double v = s.uniform();
    const double us = 0.5 - fabs(u);
    const double k = floor((2.0 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (portableLog(v) + portableLog(inv_alpha) - portableLog(a / (us * us) + b) <=
        -rate + k * log_rate - lgamma(k + 1.0))
      return k;
  }
}

// log(k!) minus Stirling's approximation of it, for BTRS's bound.
ACCEL_HD inline double stirlingTail(double k) {
  if (k < 10.0) {
    return lgamma(k + 1.0) - ((k + 0.5) * portableLog(k + 1.0) - (k + 1.0) + 0.9189385332046728);
  }
  const double r = 1.0 / (k + 1.0), r2 = r * r;
  return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0) * r2) * r2) * r;
}

// Binomial(count, prob): counts with prob above one half are sampled as count minus a sample
// with 1 - prob. Small means add geometric waiting times until they pass count; from a mean of
// 10 on, Hormann's BTRS. A count or probability that is NaN or infinite gives NaN (the count
// of trials is never reached otherwise); probabilities outside [0, 1] clamp, as ATen's.
ACCEL_HD inline double sampleBinomial(double count, double prob, ElementStream& s) {
  if (std::isnan(prob) || std::isnan(count) || std::isinf(count)) return NAN;
  if (count <= 0.0 || prob <= 0.0) return 0.0;
  if (prob >= 1.0) return count;
  const bool flip = prob > 0.5;
  const double p = flip ? 1.0 - prob : prob;
  double k;
  if (count * p < 10.0) {
    const double log_q = portableLog(1.0 - p);
    double waited = 0.0;
    k = 0.0;
    for (;;) {
      waited += ceil(portableLog(s.uniform()) / log_q);
      if (waited > count) break;
      k += 1.0;
    }
  } else {
    const double spq = sqrt(count * p * (1.0 - p));
    const double b = 1.15 + 2.53 * spq;
    const double a = -0.0873 + 0.0248 * b + 0.01 * p;
    const double c = count * p + 0.5;
    const double v_r = 0.92 - 4.2 / b;
    const double r = p / (1.0 - p);
    const double alpha = (2.83 + 5.1 / b) * spq;
    const double m = floor((count + 1.0) * p);
    for (;;) {
      const double u = s.uniform() - 0.5;
      double v = s.uniform();
      const double us = 0.5 - fabs(u);
      k = floor((2.0 * a / us + b) * u + c);
      if (k < 0.0 || k > count) continue;
      if (us >= 0.07 && v <= v_r) break;
      v = portableLog(v * alpha / (a / (us * us) + b));
      const double bound = (m + 0.5) * portableLog((m + 1.0) / (r * (count - m + 1.0))) +
                           (count + 1.0) * portableLog((count - m + 1.0) / (count - k + 1.0)) +
                           (k + 0.5) * portableLog(r * (count - k + 1.0) / (k + 1.0)) +
                           stirlingTail(m) + stirlingTail(count - m) - stirlingTail(k) -
                           stirlingTail(count - k);
      if (v <= bound) break;
    }
  }
  return flip ? count - k : k;
}

}  // namespace accel::kernels
