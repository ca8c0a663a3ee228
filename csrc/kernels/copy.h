// copy and fill: out[i] = cast(in[i]) for any dtype pair and strides (operand 0 is the
// destination), and out[i] = value.
#pragma once

#include "kernels/elementwise.h"
#include "kernels/fill.h"

namespace accel::kernels {

struct CopyTable {
  // out[i] = cast(in[i]): operand 0 is the destination, operand 1 the source.
  rt::Error (*copy)(const ElementwiseDesc& d, rt::Stream stream);
  // out[i] = value.
  rt::Error (*fill)(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
  template <class Exec>
  static CopyTable make();
};
const CopyTable& copyTable();  // the build of the driver in use

// Computing in the destination type makes the per-element cast exactly src -> dst.
template <class T>
struct CopyOp {
  using compute_t = T;
  ACCEL_HD T operator()(T v) const { return v; }
};

// Both dtypes are dispatched, so every dtype pair gets typed loads (conversion copies such as
// float -> half are hot: .to(), autocast).
// Complex copies: typed between complex dtypes; to or from a real dtype the real side is read
// or written through the per-element switch, which keeps the instantiations few.
template <class Exec>
rt::Error launchComplexCopy(const ElementwiseDesc& d, rt::Stream stream) {
  const DType out = d.op[0].dtype, in = d.op[1].dtype;
  if (!isComplex(in)) {
    return dispatchComplex(out, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      return Exec::template run<Out, AnyDType>(d, CopyOp<Out>{}, stream);
    });
  }
  return dispatchComplex(in, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    if (!isComplex(out)) return Exec::template run<AnyDType, In>(d, CopyOp<In>{}, stream);
    return dispatchComplex(out, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      return Exec::template run<Out, In>(d, CopyOp<Out>{}, stream);
    });
  });
}

template <class Exec>
rt::Error launchCopy(const ElementwiseDesc& d, rt::Stream stream) {
  if (rt::Error e = validate(d, 2, /*complex_ok=*/true); e != rt::Error::Success) return e;
  if (anyComplex(d)) return launchComplexCopy<Exec>(d, stream);
  return dispatchDType(d.op[0].dtype, [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    return dispatchDType(d.op[1].dtype, [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      return Exec::template run<Out, In>(d, CopyOp<Out>{}, stream);
    });
  });
}

template <class Exec>
CopyTable CopyTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(CopyTable::copy)>(&launchCopy<Exec>),
          static_cast<decltype(CopyTable::fill)>(&launchFill<Exec>)};
}

}  // namespace accel::kernels
