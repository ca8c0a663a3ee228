// What the losses composed of native ops share: the reduction, the backward's scale, the margin
// losses' input check, and the result into the form's output.
#pragma once

#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>

#include <utility>

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

// The margin losses' [N, C] view of their input: a non-empty vector or matrix, a 0-dim input one
// sample of one class (CPU's check and message).
inline std::pair<int64_t, int64_t> marginLossRows(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 0 || (self.dim() == 1 && self.numel() > 0) ||
                  (self.dim() == 2 && self.size(1) > 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  return {self.dim() <= 1 ? 1 : self.size(0), self.dim() == 0 ? 1 : self.size(-1)};
}

}  // namespace accel
