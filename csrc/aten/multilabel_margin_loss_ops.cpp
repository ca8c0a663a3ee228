// multilabel_margin_loss's forward and backward (reduction none/mean/sum), composed of native
// ops with CPU's formulas and checks. A row's targets are its entries before the first -1;
// every (target k, non-target j) pair adds max(0, 1 - x[k] + x[j]) / C, over an [N, C, C]
// intermediate. A target outside [-1, C) is CPU's error; that check reads device data, so it
// synchronises.
#include <ATen/ops/cumprod.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/TensorOperators.h>
#include <torch/library.h>

#include <tuple>

#include "aten/composed_loss.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// The operands as [N, C]: the input, the target slots (an index, 0 where not valid), which
// slots are valid, and each slot's pair mask [N, C(k), C(j)] given which classes are targets.
struct Operands {
  Tensor x, slot, valid;
  int64_t n, c;
  bool batched;
};

Operands operands(const Tensor& self, const Tensor& target) {
  Operands o;
  std::tie(o.n, o.c) = marginLossRows(self);
  o.batched = self.dim() == 2;
  TORCH_CHECK(
      o.batched ? target.sizes() == self.sizes() : target.dim() <= 1 && target.numel() == o.c,
      "inconsistent target size: ", target.sizes(), " for input of size: ", self.sizes());
  o.x = self.reshape({o.n, o.c});
  const Tensor t = target.reshape({o.n, o.c});
  TORCH_CHECK(at::logical_and(t >= -1, t < o.c).all().item<bool>(),
              "argument #2 'target' is out of range");
  o.valid = at::cumprod(t >= 0, 1).to(at::kBool);  // up to the first -1
  o.slot = at::where(o.valid, t, at::zeros({}, t.options()));
  return o;
}

// The hinge terms 1 - x[slot k] + x[j] and where they count: k valid, j not a target, > 0.
std::pair<Tensor, Tensor> hinges(const Operands& o, const Tensor& is_target) {
  const Tensor z = 1 - o.x.gather(1, o.slot).unsqueeze(2) + o.x.unsqueeze(1);
  const Tensor pairs = at::logical_and(o.valid.unsqueeze(2), (is_target == 0).unsqueeze(1));
  return {z, at::logical_and(pairs, z > 0)};
}

bool nativeTypes(const Tensor& self, const Tensor& target) {
  return floatingKernelType(self) && target.scalar_type() == at::kLong;
}

struct MultilabelMarginLossForward {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, const Tensor& target, int64_t) {
    return nativeTypes(self, target);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, const Tensor& target,
                                            int64_t reduction, const Output& out,
                                            const Output& is_target_out) {
    const Operands o = operands(self, target);
    // scatter_add counts repeated targets; a class is a target when counted at all.
    const Tensor counts = at::zeros({o.n, o.c}, self.options())
                              .scatter_add(1, o.slot, o.valid.to(self.scalar_type()));
    const Tensor is_target = (counts > 0).to(self.scalar_type());
    const auto [z, active] = hinges(o, is_target);
    Tensor loss = at::where(active, z, at::zeros({}, z.options())).sum({1, 2}) /
                  static_cast<double>(o.c);  // [N]
    if (reduction == at::Reduction::None && !o.batched) loss = loss.squeeze(0);
    return {into(out, reduceLoss(loss, reduction)),
            into(is_target_out, is_target.view(self.sizes()))};
  }
};

struct MultilabelMarginLossBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& target, int64_t,
                     const Tensor& is_target) {
    return nativeTypes(self, target) && g.scalar_type() == self.scalar_type() &&
           is_target.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& g, const Tensor& self, const Tensor& target,
                        int64_t reduction, const Tensor& is_target, const Output& out) {
    const Operands o = operands(self, target);
    const auto [z, active] = hinges(o, is_target.reshape({o.n, o.c}));
    const double scale = (reduction == at::Reduction::Mean ? 1.0 / o.n : 1.0) / o.c;
    const Tensor h = active.to(self.scalar_type()) * scale;  // [N, k, j]
    // +scale on each counted j, -scale on each counted pair's target class.
    Tensor grad = h.sum(1).scatter_add(1, o.slot, -h.sum(2));
    grad = grad * (reduction == at::Reduction::None && o.batched ? g.reshape({o.n, 1}) : g);
    return into(out, grad.view(self.sizes()));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<MultilabelMarginLossForward>(m, "multilabel_margin_loss_forward", nullptr,
                                             "multilabel_margin_loss_forward.output");
  registerForms<MultilabelMarginLossBackward>(m, "multilabel_margin_loss_backward", nullptr,
                                              "multilabel_margin_loss_backward.grad_input");
}

}  // namespace
}  // namespace accel
