// The C++ types behind DType (abi.h's lists): PyTorch's casting rules, the compute ("opmath")
// type, and the dispatch helpers. Knows no torch beyond c10's header-only Half and
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
#include "kernels/complex.h"
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
    ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_CASE)
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
    default: break;
  }
  return f(TypeTag<bool>{});  // unreachable for a supported dtype
}

// The dtype of a complex dtype's components.
inline DType realDType(DType t) {
  switch (t) {
    case DType::ComplexHalf: return DType::Half;
    case DType::ComplexDouble: return DType::Double;
    default: return DType::Float;
  }
}

// The same for the complex dtypes; the caller has checked isComplex(t).
template <class F>
decltype(auto) dispatchComplex(DType t, F&& f) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: return f(TypeTag<TYPE>{});
    ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
    default: break;
  }
  return f(TypeTag<Complex<float>>{});  // unreachable for a complex dtype
}

template <class T>
constexpr bool isReducedFloat = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;

template <class T>
constexpr bool isFloating = isReducedFloat<T> || std::is_floating_point_v<T>;

// The type arithmetic on T is computed in (at::opmath_type): float for half and bfloat16,
// Complex<float> for ComplexHalf.
template <class T>
using OpMath = std::conditional_t<
    isReducedFloat<T>, float,
    std::conditional_t<std::is_same_v<T, Complex<c10::Half>>, Complex<float>, T>>;

// The real type of a complex one's components (T itself when real).
template <class T, bool = isComplexScalar<T>>
struct RealOf {
  using type = T;
};
template <class T>
struct RealOf<T, true> {
  using type = typename IsComplex<T>::value_type;
};
template <class T>
using RealOfT = typename RealOf<T>::type;

// static_cast with c10::static_cast_with_inter_type's rules: half/bfloat16 go through float,
// to-bool is `!= 0` (so NaN is true), and to-uint8 goes through int64 so that negative
// values wrap the same way on CPU and GPU.
// Complex casts follow c10::static_cast_with_inter_type too: each component is cast, a
// real value gets a zero imaginary part, a complex to a real keeps the real part, and a
// complex to bool is true when either part is nonzero.
template <class To, class From>
ACCEL_HD inline To castTo(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (isComplexScalar<To>) {
    using R = RealOfT<To>;
    if constexpr (isComplexScalar<From>)
      return To(castTo<R>(v.re), castTo<R>(v.im));
    else
      return To(castTo<R>(v), R(0));
  } else if constexpr (isComplexScalar<From>) {
    if constexpr (std::is_same_v<To, bool>)
      return castTo<bool>(v.re) || castTo<bool>(v.im);
    else
      return castTo<To>(v.re);
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

// The DType whose C++ type is T, where there is one (known).
template <class T>
struct DTypeOf {
  static constexpr bool known = false;
};
#define ACCEL_CASE(NAME, TYPE, VALUE)           \
  template <>                                   \
  struct DTypeOf<TYPE> {                        \
    static constexpr bool known = true;         \
    static constexpr DType value = DType::NAME; \
  };
ACCEL_FORALL_DTYPES(ACCEL_CASE)
ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE

// Loads an element stored as `t` and casts it to T (the per-element switch of operands whose
// dtype is only known at run time). Complex storage is only expected when T is complex (the
// families that take complex dtypes compute in complex), so real kernels keep a short switch.
template <class T>
ACCEL_HD inline T loadAs(const char* p, DType t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: return castTo<T>(*reinterpret_cast<const TYPE*>(p));
  switch (t) {
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
    default: break;
  }
  if constexpr (isComplexScalar<T>) {
    switch (t) {
      ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_CASE)
      default: break;
    }
  }
#undef ACCEL_CASE
  return T(0);
}

// Casts v to the dtype `t` and stores it at p (complex storage only from a complex v).
template <class T>
ACCEL_HD void storeAsCast(char* p, DType t, T v) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: *reinterpret_cast<TYPE*>(p) = castTo<TYPE>(v); return;
  switch (t) {
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
    default: break;
  }
  if constexpr (isComplexScalar<T>) {
    switch (t) {
      ACCEL_FORALL_COMPLEX_DTYPES(ACCEL_CASE)
      default: break;
    }
  }
#undef ACCEL_CASE
}

// storeAsCast with the common case, storage of v's own type, small enough to inline: the
// switch above is not, and cost as much as a column sum's adds.
template <class T>
ACCEL_HD inline void storeAs(char* p, DType t, T v) {
  if constexpr (DTypeOf<T>::known) {
    if (t == DTypeOf<T>::value) {
      *reinterpret_cast<T*>(p) = v;
      return;
    }
  }
  storeAsCast(p, t, v);
}

}  // namespace accel::kernels
