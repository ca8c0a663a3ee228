// Float/double math usable on both sides (the C library's functions exist on host and
// device), and the extreme values of each dtype, for the reduction and normalization kernels.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
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

// log(e^a + e^b) as max + log1p(e^-|a - b|), so the larger term never overflows; equal
// infinities are themselves, and a NaN stays NaN (logaddexp, and logcumsumexp's step).
template <class T>
ACCEL_HD inline T logAddExp(T a, T b) {
  if (std::isinf(a) && a == b) return a;
  const T m = a > b ? a : b, d = -std::fabs(a - b);
  return m + std::log1p(std::exp(d));
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
