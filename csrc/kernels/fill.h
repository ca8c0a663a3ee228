// fill: out[i] = value, cast once to the output dtype.
#pragma once

#include "kernels/elementwise.h"

namespace accel::kernels {

// Converts an ABI scalar to T with the same rules as an element cast (a complex T also takes
// the imaginary part).
template <class T>
ACCEL_HD inline T scalarAs(const Scalar& s) {
  if constexpr (isComplexScalar<T>) {
    using R = RealOfT<T>;
    return T(s.is_integral ? castTo<R>(s.i) : castTo<R>(s.f), castTo<R>(s.im));
  } else {
    return s.is_integral ? castTo<T>(s.i) : castTo<T>(s.f);
  }
}

template <class T>
struct FillOp {
  using compute_t = T;
  T value;
  ACCEL_HD T operator()() const { return value; }
};

template <class Exec>
rt::Error launchFill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  if (rt::Error e = validate(d, 1, /*complex_ok=*/true); e != rt::Error::Success) return e;
  auto run = [&](auto tag) {
    using Out = typename decltype(tag)::type;
    return Exec::template run<Out>(d, FillOp<Out>{scalarAs<Out>(value)}, stream);
  };
  if (isComplex(d.op[0].dtype)) return dispatchComplex(d.op[0].dtype, run);
  return dispatchDType(d.op[0].dtype, run);
}

}  // namespace accel::kernels
