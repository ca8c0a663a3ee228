// fill: out[i] = value, cast once to the output dtype.
#pragma once

#include "kernels/elementwise.h"

namespace accel::kernels {

// Converts an ABI scalar to T with the same rules as an element cast.
template <class T>
ACCEL_HD inline T scalarAs(const Scalar& s) {
  return s.is_integral ? castTo<T>(s.i) : castTo<T>(s.f);
}

template <class T>
struct FillOp {
  using compute_t = T;
  T value;
  ACCEL_HD T operator()() const { return value; }
};

template <class Exec>
rt::Error launchFill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using Out = typename decltype(tag)::type;
    return Exec::template run<Out>(d, FillOp<Out>{scalarAs<Out>(value)}, stream);
  });
}

}  // namespace accel::kernels
