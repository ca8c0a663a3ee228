// Device-side copy with dtype conversion and any strides, shared by the ops that need one.
#pragma once

#include <ATen/core/Tensor.h>

namespace accel {

// dst = src (broadcast to dst's shape), both on the same accel device, on its current stream.
void copyOnDevice(const at::Tensor& dst, const at::Tensor& src);

}  // namespace accel
