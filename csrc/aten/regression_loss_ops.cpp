// The regression losses and their backward, composed of native ops: mse_loss, smooth_l1_loss
// and huber_loss (reduction none, mean or sum), with ATen's formulas.
#include <ATen/ops/abs.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/TensorOperators.h>
#include <torch/library.h>

#include "aten/composed_loss.h"
#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

struct MseLoss {
  static bool native(const Tensor& self, const Tensor& target, int64_t) {
    return floatingKernelType(self) && floatingKernelType(target);
  }
  static Tensor compute(const Tensor& self, const Tensor& target, int64_t reduction,
                        const Output& out) {
    const Tensor d = self - target;
    return into(out, reduceLoss(d * d, reduction));
  }
};

struct MseLossBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& target, int64_t) {
    return floatingKernelType(g) && floatingKernelType(self) && floatingKernelType(target);
  }
  static Tensor compute(const Tensor& g, const Tensor& self, const Tensor& target,
                        int64_t reduction, const Output& out) {
    return into(out, (self - target) * (2.0 * lossGradScale(self, reduction)) * g);
  }
};

struct SmoothL1Loss {
  static bool native(const Tensor& self, const Tensor& target, int64_t, double) {
    return floatingKernelType(self) && floatingKernelType(target);
  }
  static Tensor compute(const Tensor& self, const Tensor& target, int64_t reduction, double beta,
                        const Output& out) {
    TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
    const Tensor z = at::abs(self - target);
    if (beta == 0) return into(out, reduceLoss(z, reduction));
    return into(out,
                reduceLoss(at::where(z < beta, z * z * 0.5 / beta, z - 0.5 * beta), reduction));
  }
};

struct SmoothL1LossBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& target, int64_t, double) {
    return floatingKernelType(g) && floatingKernelType(self) && floatingKernelType(target);
  }
  static Tensor compute(const Tensor& g, const Tensor& self, const Tensor& target,
                        int64_t reduction, double beta, const Output& out) {
    const double n = lossGradScale(self, reduction);
    const Tensor x = self - target;
    const Tensor inside = beta == 0 ? at::zeros_like(x) : x * n * g / beta;
    return into(out, at::where(x <= -beta, g * -n, at::where(x >= beta, g * n, inside)));
  }
};

struct HuberLoss {
  static bool native(const Tensor& self, const Tensor& target, int64_t, double) {
    return floatingKernelType(self) && floatingKernelType(target);
  }
  static Tensor compute(const Tensor& self, const Tensor& target, int64_t reduction, double delta,
                        const Output& out) {
    TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
    // Half and bfloat16 are computed in float and rounded once, as CPU's float16 kernel does
    // (rounding each step was off by up to 2 ulps); the reduction then sums the rounded loss.
    const at::ScalarType dtype = at::result_type(self, target);
    const bool reduced = at::isReducedFloatingType(dtype);
    const Tensor z =
        reduced ? at::abs(self.to(at::kFloat) - target.to(at::kFloat)) : at::abs(self - target);
    const Tensor loss = at::where(z < delta, z * 0.5 * z, (z - 0.5 * delta) * delta);
    return into(out, reduceLoss(reduced ? loss.to(dtype) : loss, reduction));
  }
};

struct HuberLossBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& target, int64_t, double) {
    return floatingKernelType(g) && floatingKernelType(self) && floatingKernelType(target);
  }
  static Tensor compute(const Tensor& g, const Tensor& self, const Tensor& target,
                        int64_t reduction, double delta, const Output& out) {
    const double n = lossGradScale(self, reduction);
    const Tensor x = self - target;
    return into(out, at::where(x <= -delta, g * (-n * delta),
                               at::where(x >= delta, g * (n * delta), x * n * g)));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<MseLoss>(m, "mse_loss", nullptr, "mse_loss.out");
  registerForms<MseLossBackward>(m, "mse_loss_backward", nullptr, "mse_loss_backward.grad_input");
  registerForms<SmoothL1Loss>(m, "smooth_l1_loss", nullptr, "smooth_l1_loss.out");
  registerForms<SmoothL1LossBackward>(m, "smooth_l1_loss_backward", nullptr,
                                      "smooth_l1_loss_backward.grad_input");
  registerForms<HuberLoss>(m, "huber_loss", nullptr, "huber_loss.out");
  registerForms<HuberLossBackward>(m, "huber_loss_backward", nullptr, "huber_loss_backward.out");
}

}  // namespace
}  // namespace accel
