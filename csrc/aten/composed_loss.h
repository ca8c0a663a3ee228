// What the losses composed of native ops share: the reduction, the backward's scale, and the
// result into the form's output.
#pragma once

#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>

#include "aten/output_rules.h"

namespace accel {

inline at::Tensor reduceLoss(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return at::mean(loss);
  if (reduction == at::Reduction::Sum) return at::sum(loss);
  return loss;
}

// The backward's scale: 1/N for a mean (N the input's elements), else 1.
inline double lossGradScale(const at::Tensor& self, int64_t reduction) {
  return reduction == at::Reduction::Mean ? 1.0 / static_cast<double>(self.numel()) : 1.0;
}

// The result into the form's output: a given one (out=) takes a copy, resized as PyTorch does.
inline at::Tensor into(const Output& out, const at::Tensor& result) {
  if (!out.isGiven()) return result;
  const at::Tensor target = out.allocate(result.sizes(), result.options());
  return out.finish(target.copy_(result));
}

}  // namespace accel
