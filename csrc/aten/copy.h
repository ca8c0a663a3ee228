// Device-side copy with dtype conversion and any strides, shared by the ops that need one;
// the stored values of a lazily conjugated or negated view.
#pragma once

#include <ATen/core/Tensor.h>

namespace accel {

// dst = src (broadcast to dst's shape), both on the same accel device, on its current stream.
void copyOnDevice(const at::Tensor& dst, const at::Tensor& src);

// A view of the values as stored, without the lazy conjugate and negative bits.
at::Tensor storedValues(const at::Tensor& t);

}  // namespace accel
