// Float/double math usable on both sides (the C library's functions exist on host and
// device), and the extreme values of each dtype, for the reduction and normalization kernels.
#pragma once

#include <math.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dtype.h"

namespace accel::kernels {

ACCEL_HD inline float mexp(float x) { return expf(x); }
ACCEL_HD inline double mexp(double x) { return exp(x); }
ACCEL_HD inline float mlog(float x) { return logf(x); }
ACCEL_HD inline double mlog(double x) { return log(x); }
ACCEL_HD inline float msqrt(float x) { return sqrtf(x); }
ACCEL_HD inline double msqrt(double x) { return sqrt(x); }
ACCEL_HD inline float mpow(float x, float y) { return powf(x, y); }
ACCEL_HD inline double mpow(double x, double y) { return pow(x, y); }
ACCEL_HD inline float mabs(float x) { return fabsf(x); }
ACCEL_HD inline double mabs(double x) { return fabs(x); }
ACCEL_HD inline float mtanh(float x) { return tanhf(x); }
ACCEL_HD inline double mtanh(double x) { return tanh(x); }

// e^x for float without library calls or branches, so that host loops over it vectorize
// (expf does not): Cody-Waite reduction to r in [-ln2/2, ln2/2], Cephes' degree-6 polynomial,
// and 2^n from the exponent bits. Within 2 ulp of expf for x <= 88; 0 below -87.3 (no
// denormals); NaN stays NaN. Softmax only passes x <= 0.
ACCEL_HD inline float expNoCall(float x) {
  constexpr float lo = -87.33654f, hi = 88.0f, round = 12582912.0f;  // 1.5 * 2^23
  float xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  const float n = (xc * 1.44269504088896341f + round) - round;  // round to nearest
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  const float y = x < lo ? 0.0f : p * scale;
  return x != x ? x : y;
}

template <class T>
ACCEL_HD inline bool isNan(T v) {
  return v != v;  // false for every integral type
}

// The smallest value of T (-inf for floating types), and the largest.
template <class T>
ACCEL_HD inline T lowestOf() {
  if constexpr (std::is_same_v<T, bool>)
    return false;
  else if constexpr (std::is_floating_point_v<T>)
    return -static_cast<T>(INFINITY);
  else if constexpr (std::is_unsigned_v<T>)
    return T(0);
  else
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(1) << (8 * sizeof(T) - 1));
}

template <class T>
ACCEL_HD inline T highestOf() {
  if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(INFINITY);
  else if constexpr (std::is_unsigned_v<T>)
    return static_cast<T>(~T(0));
  else
    return static_cast<T>(~lowestOf<T>());
}

}  // namespace accel::kernels
