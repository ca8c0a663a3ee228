// vexp, verf and vtanh: for float, from + - * / and bit operations only, with selects instead
// of branches, so that the host's loops over them vectorize (expf, erff and tanhf are library
// calls that do not); for double, the library's. vsin / vcos likewise for float arguments up to
// kTrigFastLimit (trigFast), evaluated in double. Written once for both drivers. Accuracy
// against the correctly rounded value over the float range (tests/cpp/kernels_vector_math.cpp):
// exp within 1 ulp (denormal results included), erf and tanh within 1.5 ulp, sin and cos within
// 1 ulp; NaN stays NaN and the infinities map as the library's do.
#pragma once

#include <math.h>

#include <cstdint>
#include <cstring>

#include "kernels/macros.h"

namespace accel::kernels {

// 2^e for an integer e in [-150, 128] as the product of two normal floats, so that results in
// the denormal range round once and results past the top overflow to infinity.
ACCEL_HD inline float scaleByPow2(float p, int32_t e) {
  const int32_t e1 = e >> 1, e2 = e - e1;
  const int32_t b1 = (e1 + 127) << 23, b2 = (e2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  return p * s1 * s2;
}

// e^x: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, Cephes' degree-6 polynomial for e^r,
// then 2^n. Below -104 the result is 0 and above 88.8 infinity (both already are there).
ACCEL_HD inline float vexp(float x) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float xc = x < -104.0f ? -104.0f : x;  // NaN passes both clamps
  xc = xc > 88.8f ? 88.8f : xc;
  const float t = xc * 1.44269504088896341f + kShift;
  const float n = t - kShift;
  float r = xc - n * 0.693359375f;  // ln2 = 0.693359375 - 2.12194440e-4 (first part exact in n)
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // n from t's low mantissa bits (t = kShift + n exactly): no float-to-int conversion of NaN.
  int32_t tb, sb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&sb, &kShift, sizeof sb);
  return scaleByPow2(p, tb - sb);
}

// erf(x): x + x q(x^2) below 0.921875, 1 - e^(-x^2) R(|x|) up to 3.9375, 1 beyond (erf rounds
// to 1 from 3.92 on), with the sign of x. q and R are least-squares fits on Chebyshev nodes.
ACCEL_HD inline float verf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float x2 = x * x;
  float q = 8.392696e-05f;
  q = q * x2 + -0.0008148506f;
  q = q * x2 + 0.0052015916f;
  q = q * x2 + -0.026859647f;
  q = q * x2 + 0.112837f;
  q = q * x2 + -0.37612635f;
  q = q * x2 + 0.12837917f;
  const float small = x + x * q;
  float p = 0.00012272468f;
  p = p * a + -0.002149361f;
  p = p * a + 0.016822515f;
  p = p * a + -0.07819622f;
  p = p * a + 0.2424599f;
  p = p * a + -0.53514284f;
  p = p * a + 0.8763656f;
  p = p * a + -1.086245f;
  p = p * a + 0.9935462f;
  float large = 1.0f - vexp(-x2) * p;
  large = a >= 3.9375f ? 1.0f : large;
  large = x < 0.0f ? -large : large;
  return a < 0.921875f ? small : (x != x ? x : large);
}

// tanh(x): x + x^3 q(x^2) below 0.625, 1 - 2 / (e^(2|x|) + 1) above, with the sign of x.
ACCEL_HD inline float vtanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float x2 = x * x;
  float q = 0.0022956962f;
  q = q * x2 + -0.008346825f;
  q = q * x2 + 0.0217699f;
  q = q * x2 + -0.053959396f;
  q = q * x2 + 0.13333304f;
  q = q * x2 + -0.33333334f;
  const float small = x + x * (x2 * q);
  float large = 1.0f - 2.0f / (vexp(2.0f * a) + 1.0f);
  large = x < 0.0f ? -large : large;
  return a < 0.625f ? small : (x != x ? x : large);
}

ACCEL_HD inline double vexp(double x) { return exp(x); }
ACCEL_HD inline double verf(double x) { return erf(x); }
ACCEL_HD inline double vtanh(double x) { return tanh(x); }

// sin and cos of a float in double: x = n pi/2 + r with n = rint(x 2/pi) and pi/2 in two parts,
// the first of 33 bits (n * kPio2Hi is exact for |n| < 2^20), so |r| <= pi/4 to within 1e-19;
// then Taylor polynomials of r to degree 13 and 14 (truncation under 3e-14) and the quadrant
// n mod 4 by selects. Beyond kTrigFastLimit the reduction needs more of pi than two doubles
// hold: trigFast is false there (and for inf and NaN), and callers use the library.
constexpr float kTrigFastLimit = 1.6e6f;

ACCEL_HD inline bool trigFast(float x) { return x <= kTrigFastLimit && x >= -kTrigFastLimit; }

template <bool Cos>
ACCEL_HD inline float vsincos(float x) {
  constexpr double kShift = 6755399441055744.0;      // 1.5 * 2^52: adding it rounds to an integer
  constexpr double kPio2Hi = 1.5707963267341256;     // pi/2 to 33 bits
  constexpr double kPio2Lo = 6.077100506506192e-11;  // pi/2 - kPio2Hi
  const double xd = x;
  const double t = xd * 0.6366197723675814 + kShift;
  const double n = t - kShift;
  const double r = (xd - n * kPio2Hi) - n * kPio2Lo;
  const double r2 = r * r;
  double s = 1.0 / 6227020800;  // 1/13!
  s = s * r2 - 1.0 / 39916800;
  s = s * r2 + 1.0 / 362880;
  s = s * r2 - 1.0 / 5040;
  s = s * r2 + 1.0 / 120;
  s = s * r2 - 1.0 / 6;
  s = r + r * r2 * s;
  double c = -1.0 / 87178291200;  // -1/14!
  c = c * r2 + 1.0 / 479001600;
  c = c * r2 - 1.0 / 3628800;
  c = c * r2 + 1.0 / 40320;
  c = c * r2 - 1.0 / 720;
  c = c * r2 + 1.0 / 24;
  c = c * r2 - 0.5;
  c = 1.0 + r2 * c;
  // n from t's low mantissa bits (t = kShift + n exactly); cos(x) = sin(x + pi/2).
  int64_t tb, sb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&sb, &kShift, sizeof sb);
  const int64_t q = (tb - sb + (Cos ? 1 : 0)) & 3;
  const double v = (q & 1) ? c : s;
  const float result = static_cast<float>((q & 2) ? -v : v);
  return Cos || x != 0.0f ? result : x;  // sin(-0) is -0
}

}  // namespace accel::kernels
