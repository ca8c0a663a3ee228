// The dtype tests that the ops composed of other native ops (batch and group norm, pooling,
// upsampling) make in native(): a floating dtype the kernels handle, or an optional tensor
// that is absent; and a scalar as such a dtype holds it.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "aten/elementwise_desc.h"

namespace accel {

inline bool given(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

inline bool floatingKernelType(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type()) && kernelSupports(t.scalar_type());
}

inline bool floatingOrAbsent(const std::optional<at::Tensor>& t) {
  return !given(t) || floatingKernelType(*t);
}

// `v` as `dtype` holds it (c10's conversion: half and bfloat16 through float), back in double:
// the value ATen's kernels compute with after scalar.to<scalar_t>().
inline double heldAs(const c10::Scalar& v, at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return static_cast<float>(v.to<c10::Half>());
    case at::kBFloat16: return static_cast<float>(v.to<c10::BFloat16>());
    case at::kFloat: return v.to<float>();
    default: return v.toDouble();
  }
}

}  // namespace accel
