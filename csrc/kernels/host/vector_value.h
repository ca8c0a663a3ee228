// N lanes of A as one GCC vector value, and its loads. GCC vectorizes a select over an array of
// lanes (a running max: lane[l] = v > lane[l] ? v : lane[l]) into scalar compares; on a vector
// value the same select is one instruction per register. Host only (GCC and Clang extensions).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/reduce_math.h"

namespace accel::kernels::host {

template <class A, int N>
struct VectorOf {
  typedef A type __attribute__((vector_size(N * sizeof(A))));
};
template <class A, int N>
using Vector = typename VectorOf<A, N>::type;

// One T as A; a bfloat16 by shifting its bits into a float's (c10's conversion goes through a
// memcpy that GCC keeps in integer registers, one element at a time).
template <class A, class T>
inline A loadCast(T v) {
  if constexpr (std::is_same_v<T, c10::BFloat16> && std::is_same_v<A, float>) {
    const uint32_t bits = uint32_t(v.x) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  } else {
    return castTo<A>(v);
  }
}

// p[0..N) as N lanes of A into v; bfloat16 widened in vector registers. (An out parameter: a
// vector returned by value would take another ABI in the builds without AVX-512.)
template <class A, int N, class T>
inline void loadVector(const T* p, Vector<A, N>& v) {
  if constexpr (std::is_same_v<T, A>) {
    std::memcpy(&v, p, sizeof v);
  } else if constexpr (std::is_same_v<T, c10::BFloat16> && std::is_same_v<A, float>) {
    Vector<uint16_t, N> bits;
    std::memcpy(&bits, p, sizeof bits);
    const Vector<uint32_t, N> wide = __builtin_convertvector(bits, Vector<uint32_t, N>) << 16;
    std::memcpy(&v, &wide, sizeof v);
  } else {
    for (int l = 0; l < N; ++l) v[l] = castTo<A>(p[l]);
  }
}

// v's lanes folded half onto half: log2(N) vector steps, where a scalar walk over the lanes
// is N dependent ones (most of a 32-element softmax row's time went there).
template <class A, int N>
__attribute__((always_inline)) inline void splitLanes(const Vector<A, N>& v, Vector<A, N / 2>& lo,
                                                      Vector<A, N / 2>& hi) {
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
}

template <class A, int N>
__attribute__((always_inline)) inline A sumLanes(const Vector<A, N>& v) {
  if constexpr (N == 2) {
    return v[0] + v[1];
  } else {
    Vector<A, N / 2> lo, hi;
    splitLanes<A, N>(v, lo, hi);
    return sumLanes<A, N / 2>(lo + hi);
  }
}

// The max (IsMax) or min of the lanes, a NaN if one is (amax's rule).
template <bool IsMax, class A, int N>
__attribute__((always_inline)) inline A extremeLanes(const Vector<A, N>& v) {
  if constexpr (N == 1) {
    return v[0];
  } else {
    Vector<A, N / 2> lo, hi;
    splitLanes<A, N>(v, lo, hi);
    const auto take_hi = (hi != hi) | (IsMax ? hi > lo : hi < lo);
    return extremeLanes<IsMax, A, N / 2>(take_hi ? hi : lo);
  }
}

// The max (IsMax) or min of p[0..n) in A, a NaN if there is one (amax's rule), with one
// AVX-512 register of lanes (where the caller is compiled for it).
template <bool IsMax, class A, class T>
__attribute__((always_inline)) inline A vectorExtreme(const T* p, int64_t n) {
  constexpr int L = 64 / sizeof(A);
  const A identity = IsMax ? lowestOf<A>() : highestOf<A>();
  Vector<A, L> acc, nan;  // nan: each lane's NaN if it met one, else the identity
  for (int l = 0; l < L; ++l) acc[l] = nan[l] = identity;
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    Vector<A, L> v;
    loadVector<A, L>(p + k, v);
    if constexpr (IsMax) {
      acc = v > acc ? v : acc;
    } else {
      acc = v < acc ? v : acc;
    }
    nan = v != v ? v : nan;
  }
  A a = extremeLanes<IsMax, A, L>(nan != nan ? nan : acc);
  for (; k < n; ++k) {
    const A b = loadCast<A>(p[k]);
    if (isNan(b) || (IsMax ? b > a : b < a)) a = b;
  }
  return a;
}

}  // namespace accel::kernels::host
