// The dtype tests that the ops composed of other native ops (batch and group norm, pooling,
// upsampling) make in native(): a floating dtype the kernels handle, or an optional tensor
// that is absent.
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

}  // namespace accel
