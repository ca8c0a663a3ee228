// N lanes of A as one GCC vector value, and its loads. GCC vectorizes a select over an array of
// lanes (a running max: lane[l] = v > lane[l] ? v : lane[l]) into scalar compares; on a vector
// value the same select is one instruction per register. Host only (GCC and Clang extensions).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dtype.h"

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

}  // namespace accel::kernels::host
