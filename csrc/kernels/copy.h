// copy: out[i] = cast(in[i]), any dtype pair, any strides. Operand 0 is the destination.
#pragma once

#include "kernels/elementwise.h"

namespace accel::kernels {

// Computing in the destination type makes the per-element cast exactly src -> dst.
template <class T>
struct CopyOp {
  using compute_t = T;
  ACCEL_HD T operator()(T v) const { return v; }
};

// Both dtypes are dispatched, so every dtype pair gets typed loads (conversion copies such as
// float -> half are hot: .to(), autocast).
template <class Exec>
rt::Error launchCopy(const ElementwiseDesc& d, rt::Stream stream) {
  if (rt::Error e = validate(d, 2); e != rt::Error::Success) return e;
  return dispatchDType(d.op[0].dtype, [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    return dispatchDType(d.op[1].dtype, [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      return Exec::template run<Out, In>(d, CopyOp<Out>{}, stream);
    });
  });
}

}  // namespace accel::kernels
