// multi_margin_loss and its backward (p 1 or 2, margin, optional weight, reduction none/mean/
// sum), composed of native ops over [N, C] with CPU's formulas and checks. A target outside
// [0, C) is CPU's "target out of range"; that check reads device data, so it synchronises.
#include <ATen/ops/arange.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/TensorOperators.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/composed_loss.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;
using c10::Scalar;

// The loss's operands, checked as CPU does: input as [N, C], target as [N, 1], weight[target].
struct Operands {
  Tensor x, y, weight;  // weight undefined when absent
  int64_t n, c;
  bool batched;  // a none reduction keeps the [N] shape
};

Operands operands(const Tensor& self, const Tensor& target, const Scalar& p,
                  const std::optional<Tensor>& weight) {
  TORCH_CHECK(p.equal(1) || p.equal(2), "only p == 1 and p == 2 supported");
  Operands o;
  std::tie(o.n, o.c) = marginLossRows(self);
  TORCH_CHECK(target.dim() <= 1 && target.numel() == o.n,
              "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
              "input samples (batch size). Expected target size [",
              o.n, "], but got ", target.sizes(), ". Input has shape ", self.sizes(), ".");
  TORCH_CHECK(!given(weight) || (weight->dim() <= 1 && weight->numel() == o.c),
              "inconsistent weight size, expected ", o.c, " but got ", weight->sizes());
  o.x = self.reshape({o.n, o.c});
  o.y = target.reshape({o.n, 1});
  TORCH_CHECK(at::logical_and(o.y >= 0, o.y < o.c).all().item<bool>(), "target out of range");
  if (given(weight))
    o.weight = weight->reshape({o.c}).index_select(0, o.y.view({o.n})).view({o.n, 1});
  o.batched = target.dim() > 0;
  return o;
}

// margin - x[target] + x per element, and where it counts: off the target column and > 0.
std::pair<Tensor, Tensor> margins(const Operands& o, const Scalar& margin) {
  const Tensor z = margin - o.x.gather(1, o.y) + o.x;
  const Tensor off_target = at::arange(o.c, o.y.options()).view({1, o.c}) != o.y;
  return {z, at::logical_and(off_target, z > 0)};
}

bool nativeTypes(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  return floatingKernelType(self) && target.scalar_type() == at::kLong &&
         (!given(weight) || weight->scalar_type() == self.scalar_type());
}

struct MultiMarginLoss {
  static bool native(const Tensor& self, const Tensor& target, const Scalar&, const Scalar&,
                     const std::optional<Tensor>& weight, int64_t) {
    return nativeTypes(self, target, weight);
  }
  static Tensor compute(const Tensor& self, const Tensor& target, const Scalar& p,
                        const Scalar& margin, const std::optional<Tensor>& weight,
                        int64_t reduction, const Output& out) {
    const Operands o = operands(self, target, p, weight);
    const auto [z, active] = margins(o, margin);
    Tensor h = at::where(active, p.equal(1) ? z : z * z, at::zeros({}, z.options()));
    if (o.weight.defined()) h = h * o.weight;
    Tensor loss = h.sum(1) / static_cast<double>(o.c);  // [N]
    if (reduction == at::Reduction::None && !o.batched) loss = loss.squeeze(0);
    return into(out, reduceLoss(loss, reduction));
  }
};

struct MultiMarginLossBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& target, const Scalar&,
                     const Scalar&, const std::optional<Tensor>& weight, int64_t) {
    return nativeTypes(self, target, weight) && g.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& g, const Tensor& self, const Tensor& target, const Scalar& p,
                        const Scalar& margin, const std::optional<Tensor>& weight,
                        int64_t reduction, const Output& out) {
    const Operands o = operands(self, target, p, weight);
    const auto [z, active] = margins(o, margin);
    const double scale = (reduction == at::Reduction::Mean ? 1.0 / o.n : 1.0) / o.c;
    const Tensor zero = at::zeros({}, z.options());
    Tensor h = p.equal(1) ? at::where(active, zero + scale, zero)
                          : at::where(active, z, zero) * (2 * scale);
    if (o.weight.defined()) h = h * o.weight;
    // The target column takes minus the sum of the others (its own entry is 0).
    Tensor grad = h.scatter(1, o.y, -h.sum(1, /*keepdim=*/true));
    grad = grad * (reduction == at::Reduction::None && o.batched ? g.reshape({o.n, 1}) : g);
    return into(out, grad.view(self.sizes()));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<MultiMarginLoss>(m, "multi_margin_loss", nullptr, "multi_margin_loss.out");
  registerForms<MultiMarginLossBackward>(m, "multi_margin_loss_backward", nullptr,
                                         "multi_margin_loss_backward.grad_input");
}

}  // namespace
}  // namespace accel
