// binary_cross_entropy and its backward (optional weight, reduction none/mean/sum), composed of
// native ops with CPU's formulas: the logs clamped at -100, the backward's denominator at 1e-12.
// CPU and CUDA refuse inputs and targets outside [0, 1]; that check reads device data, so it
// synchronises (as CUDA's device-side assert would surface at the next synchronisation).
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/log.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/logical_and.h>
#include <ATen/TensorOperators.h>
#include <torch/library.h>

#include <optional>

#include "aten/composed_loss.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

void checkInRange(const Tensor& t, const char* name) {
  TORCH_CHECK(at::logical_and(t >= 0, t <= 1).all().item<bool>(), "all elements of ", name,
              " should be between 0 and 1");
}

void checkSizes(const Tensor& self, const Tensor& target) {
  TORCH_CHECK(self.sizes() == target.sizes(), "binary_cross_entropy: target size ", target.sizes(),
              " differs from input size ", self.sizes(), " on ", self.device());
}

bool nativeTypes(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  return floatingKernelType(self) && target.scalar_type() == self.scalar_type() &&
         (!given(weight) || weight->scalar_type() == self.scalar_type());
}

struct BinaryCrossEntropy {
  static bool native(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t) {
    return nativeTypes(self, target, weight);
  }
  static Tensor compute(const Tensor& self, const Tensor& target,
                        const std::optional<Tensor>& weight, int64_t reduction, const Output& out) {
    checkSizes(self, target);
    checkInRange(self, "input");
    checkInRange(target, "target");
    Tensor loss = (target - 1) * at::clamp_min(at::log1p(-self), -100) -
                  target * at::clamp_min(at::log(self), -100);
    if (given(weight)) loss = loss * *weight;
    return into(out, reduceLoss(loss, reduction));
  }
};

struct BinaryCrossEntropyBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& target,
                     const std::optional<Tensor>& weight, int64_t) {
    return nativeTypes(self, target, weight) && g.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& g, const Tensor& self, const Tensor& target,
                        const std::optional<Tensor>& weight, int64_t reduction, const Output& out) {
    checkSizes(self, target);
    Tensor grad = g * (self - target) / at::clamp_min((1 - self) * self, 1e-12);
    if (given(weight)) grad = grad * *weight;
    const double scale = lossGradScale(self, reduction);
    return into(out, scale == 1.0 ? grad : grad * scale);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<BinaryCrossEntropy>(m, "binary_cross_entropy", nullptr, "binary_cross_entropy.out");
  registerForms<BinaryCrossEntropyBackward>(m, "binary_cross_entropy_backward", nullptr,
                                            "binary_cross_entropy_backward.grad_input");
}

}  // namespace
}  // namespace accel
