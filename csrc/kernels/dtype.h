// The C++ types behind DType (abi.h's list): PyTorch's casting rules, the compute ("opmath")
// type, and a dispatch helper. Knows no torch beyond c10's header-only Half and
// BFloat16.
#pragma once

#include <cstdint>
#include <type_traits>

#if __has_include(<torch/headeronly/util/Half.h>)
#include <torch/headeronly/util/BFloat16.h>
#include <torch/headeronly/util/Half.h>
#else
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#endif

#include "kernels/abi.h"
#include "kernels/macros.h"

namespace accel::kernels {

template <class T>
struct TypeTag {
  using type = T;
};

inline int64_t elementSize(DType t) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: return sizeof(TYPE);
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
  }
  return 0;
}

// Calls f(TypeTag<T>{}) with the C++ type of `t`. Host side only (launch dispatch); the
// caller has checked isSupported(t).
template <class F>
decltype(auto) dispatchDType(DType t, F&& f) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: return f(TypeTag<TYPE>{});
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
  }
  return f(TypeTag<bool>{});  // unreachable for a supported dtype
}

template <class T>
constexpr bool isReducedFloat = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;

template <class T>
constexpr bool isFloating = isReducedFloat<T> || std::is_floating_point_v<T>;

// The type arithmetic on T is computed in (at::opmath_type): float for half and bfloat16.
template <class T>
using OpMath = std::conditional_t<isReducedFloat<T>, float, T>;

// static_cast with c10::static_cast_with_inter_type's rules: half/bfloat16 go through float,
// to-bool is `!= 0` (so NaN is true), and to-uint8 goes through int64 so that negative
// values wrap the same way on CPU and GPU.
template <class To, class From>
ACCEL_HD inline To castTo(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    const OpMath<From> w = static_cast<OpMath<From>>(v);
    if constexpr (std::is_same_v<To, bool>) {
      return w != OpMath<From>(0);
    } else if constexpr (std::is_same_v<To, uint8_t>) {
      return static_cast<uint8_t>(static_cast<int64_t>(w));
    } else {
      return static_cast<To>(w);
    }
  }
}

// Loads an element stored as `t` and casts it to T (the per-element switch of operands whose
// dtype is only known at run time).
template <class T>
ACCEL_HD inline T loadAs(const char* p, DType t) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: return castTo<T>(*reinterpret_cast<const TYPE*>(p));
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
  }
  return T(0);
}

// Casts v to the dtype `t` and stores it at p.
template <class T>
ACCEL_HD inline void storeAs(char* p, DType t, T v) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: *reinterpret_cast<TYPE*>(p) = castTo<TYPE>(v); return;
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
  }
}

}  // namespace accel::kernels
