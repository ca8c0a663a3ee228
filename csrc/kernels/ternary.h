// Three-input elementwise ops (where, lerp, addcmul, addcdiv, clamp with tensor bounds) and
// masked_fill. Every input is in the output dtype except the bool condition or mask, so the
// dense fast path stays typed.
#pragma once

#include "kernels/elementwise.h"
#include "kernels/fill.h"

namespace accel::kernels {

// Three inputs, all in the output dtype except Where's condition (bool).
enum class TernaryOp : int {
  Where,    // cond ? a : b
  Lerp,     // a + w * (b - a), w the third input
  Addcmul,  // a + value * b * c
  Addcdiv,  // a + value * b / c
  Clamp,    // min(max(a, lo), hi): b = lo, c = hi
};

struct TernaryTable {
  // Operands: out, then three inputs; `value` scales Addcmul/Addcdiv.
  rt::Error (*ternary)(TernaryOp op, const ElementwiseDesc& d, Scalar value, rt::Stream stream);
  // out = mask ? value : in (operands out, mask (bool), in).
  rt::Error (*masked_fill)(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
  template <class Exec>
  static TernaryTable make();
};
const TernaryTable& ternaryTable();  // the build of the driver in use

// Computed in opmath like the rest: half/bfloat16 round-trip through float exactly.
template <class T>
struct WhereOp {
  using compute_t = T;
  ACCEL_HD T operator()(T cond, T a, T b) const { return cond != T(0) ? a : b; }
};

// ATen's lerp: the formula is chosen by |w| so that lerp(a, b, 1) == b exactly.
template <class T>
ACCEL_HD inline T lerpOf(T a, T b, T w) {
  return (w < T(0.5) && w > T(-0.5)) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <class T>
struct LerpOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b, T w) const { return lerpOf(a, b, w); }
};

template <class T>
struct AddcmulOp {
  using compute_t = T;
  T value;
  ACCEL_HD T operator()(T a, T b, T c) const { return a + value * b * c; }
};

template <class T>
struct AddcdivOp {
  using compute_t = T;
  T value;
  ACCEL_HD T operator()(T a, T b, T c) const { return a + value * (b / c); }
};

template <class T>
struct ClampTensorOp {
  using compute_t = T;
  ACCEL_HD T operator()(T x, T lo, T hi) const {
    if (x != x) return x;
    const T y = lo != lo ? lo : (x < lo ? lo : x);
    return hi != hi ? hi : (y > hi ? hi : y);
  }
};

template <class T>
struct MaskedFillOp {
  using compute_t = T;
  T value;
  ACCEL_HD T operator()(T mask, T x) const { return mask != T(0) ? value : x; }
};

template <class Exec>
rt::Error launchTernary(TernaryOp op, const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  if (rt::Error e = validate(d, 4, /*complex_ok=*/op == TernaryOp::Where); e != rt::Error::Success)
    return e;
  const DType t = d.op[0].dtype;
  const bool cond_ok = op == TernaryOp::Where ? d.op[1].dtype == DType::Bool : d.op[1].dtype == t;
  if (!cond_ok || d.op[2].dtype != t || d.op[3].dtype != t) return rt::Error::InvalidValue;
  if (isComplex(t)) {
    // where is the one ternary op on complex values (a selection: no arithmetic).
    return dispatchComplex(t, [&](auto tag) {
      using S = typename decltype(tag)::type;
      return Exec::template run<S, bool, S, S>(d, WhereOp<S>{}, stream);
    });
  }
  return dispatchDType(t, [&](auto tag) -> rt::Error {
    using S = typename decltype(tag)::type;
    using T = OpMath<S>;
    if (op == TernaryOp::Where) return Exec::template run<S, bool, S, S>(d, WhereOp<T>{}, stream);
    if constexpr (std::is_same_v<S, bool>) {
      return rt::Error::NotSupported;
    } else {
      switch (op) {
        case TernaryOp::Clamp: return Exec::template run<S, S, S, S>(d, ClampTensorOp<T>{}, stream);
        case TernaryOp::Addcmul:
          return Exec::template run<S, S, S, S>(d, AddcmulOp<T>{scalarAs<T>(value)}, stream);
        case TernaryOp::Addcdiv:
          return Exec::template run<S, S, S, S>(d, AddcdivOp<T>{scalarAs<T>(value)}, stream);
        case TernaryOp::Lerp:
          if constexpr (isFloating<S>)
            return Exec::template run<S, S, S, S>(d, LerpOp<T>{}, stream);
          return rt::Error::NotSupported;
        default: return rt::Error::InvalidValue;
      }
    }
  });
}

template <class Exec>
rt::Error launchMaskedFill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  if (rt::Error e = validate(d, 3); e != rt::Error::Success) return e;
  if (d.op[1].dtype != DType::Bool || d.op[2].dtype != d.op[0].dtype)
    return rt::Error::InvalidValue;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using T = OpMath<S>;
    return Exec::template run<S, bool, S>(d, MaskedFillOp<T>{scalarAs<T>(value)}, stream);
  });
}

template <class Exec>
TernaryTable TernaryTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(TernaryTable::ternary)>(&launchTernary<Exec>),
          static_cast<decltype(TernaryTable::masked_fill)>(&launchMaskedFill<Exec>)};
}

}  // namespace accel::kernels
