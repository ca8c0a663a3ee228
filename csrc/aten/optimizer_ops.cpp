// Optimizer and AMP ops: torch._fused_adam_ / _fused_adamw_ (Adam/AdamW(fused=True)), and
// GradScaler's _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_. Their small
// control tensors (steps, lr, found_inf, inv_scale, the growth tracker) stay on the device: the AMP
// kernels read them themselves, and the AdamW step is composed of native elementwise ops.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/amp.h"

namespace accel {
namespace {

void checkScalarTensor(const at::Tensor& t, c10::ScalarType dtype, const char* what) {
  TORCH_CHECK(t.is_privateuseone(), what, " must be an accel tensor.");
  TORCH_CHECK(t.numel() == 1, what, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == dtype, what, " must be a ", dtype, " tensor.");
}

void amp_unscale_(at::TensorList grads, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  checkScalarTensor(found_inf, c10::kFloat, "found_inf");
  checkScalarTensor(inv_scale, c10::kFloat, "inv_scale");
  float* found = found_inf.data_ptr<float>();
  const float* inv = inv_scale.const_data_ptr<float>();
  for (const at::Tensor& g : grads) {
    TORCH_CHECK(g.device() == found_inf.device(),
                "_amp_foreach_non_finite_check_and_unscale_: all tensors must be on ",
                found_inf.device());
    TORCH_CHECK(c10::isFloatingType(g.scalar_type()),
                "_amp_foreach_non_finite_check_and_unscale_: grads must be floating point");
    at::Tensor grad = g;
    runElementwise(grad, grad.scalar_type(), {grad},
                   [found, inv](const kernels::ElementwiseDesc& d, rt::Stream s) {
                     return kernels::ampTable().amp_unscale(d, found, inv, s);
                   });
  }
}

at::Tensor& amp_update_scale_(at::Tensor& scale, at::Tensor& growth_tracker,
                              const at::Tensor& found_inf, double growth_factor,
                              double backoff_factor, int64_t growth_interval) {
  checkScalarTensor(scale, c10::kFloat, "current_scale");
  checkScalarTensor(growth_tracker, c10::kInt, "growth_tracker");
  checkScalarTensor(found_inf, c10::kFloat, "found_inf");
  int32_t* tracker = growth_tracker.data_ptr<int32_t>();
  const float* found = found_inf.const_data_ptr<float>();
  runElementwise(scale, c10::kFloat, {scale},
                 [&](const kernels::ElementwiseDesc& d, rt::Stream st) {
                   return kernels::ampTable().amp_update_scale(d, tracker, found, growth_factor,
                                                               backoff_factor, growth_interval, st);
                 });
  return scale;
}

// One Adam (decoupled = false: L2 weight decay added to the gradient) or AdamW (decoupled:
// the parameter decays) step on one parameter, as CUDA's fused kernel computes it (opmath float for
// reduced precision params). `lr` is a device tensor or a number. With found_inf set, nothing
// changes (the new values are selected away on the device).
void adamStep(at::Tensor param, at::Tensor grad, at::Tensor exp_avg, at::Tensor exp_avg_sq,
              at::Tensor max_exp_avg_sq, const at::Tensor& step, const at::Tensor& lr, double beta1,
              double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
              const c10::optional<at::Tensor>& grad_scale,
              const c10::optional<at::Tensor>& found_inf, bool decoupled) {
  const auto opmath = param.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  at::Tensor p = param.to(opmath), g = grad.to(opmath), m = exp_avg.to(opmath),
             v = exp_avg_sq.to(opmath);
  if (grad_scale && grad_scale->defined()) g = g.div(*grad_scale);
  const at::Tensor unscaled = g;
  if (maximize) g = g.neg();
  at::Tensor step_f = step.to(opmath);
  if (weight_decay != 0) {
    if (decoupled)
      p = p.mul(at::Tensor(lr.mul(weight_decay)).neg().add(1));
    else
      g = g.add(p, weight_decay);
  }
  m = m.lerp(g, 1 - beta1);
  v = v.mul(beta2).addcmul(g, g, 1 - beta2);
  at::Tensor bc1 = at::pow(beta1, step_f).neg().add(1);
  at::Tensor bc2_sqrt = at::pow(beta2, step_f).neg().add(1).sqrt();
  at::Tensor denom_src = v;
  at::Tensor new_max;
  if (amsgrad) {
    new_max = at::maximum(max_exp_avg_sq.to(opmath), v);
    denom_src = new_max;
  }
  at::Tensor denom = denom_src.sqrt().div(bc2_sqrt).add(eps);
  p = p.sub(m.div(denom).mul(lr.div(bc1)));
  auto commit = [&](at::Tensor& dst, const at::Tensor& value) {
    if (found_inf && found_inf->defined()) {
      dst.copy_(at::where(found_inf->ne(0), dst, value.to(dst.scalar_type())));
    } else {
      dst.copy_(value);
    }
  };
  commit(param, p);
  commit(exp_avg, m);
  commit(exp_avg_sq, v);
  if (amsgrad) commit(max_exp_avg_sq, new_max);
  if (grad_scale && grad_scale->defined()) commit(grad, unscaled);
}

void fusedAdam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
               at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList steps,
               const at::Tensor& lr, double beta1, double beta2, double weight_decay, double eps,
               bool amsgrad, bool maximize, const c10::optional<at::Tensor>& grad_scale,
               const c10::optional<at::Tensor>& found_inf, bool decoupled) {
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n &&
                  steps.size() == n && (!amsgrad || max_exp_avg_sqs.size() == n),
              "_fused_adamw_: all tensor lists must have the same length");
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(steps[i].device() == params[i].device(),
                "_fused_adamw_: state_steps must be on the parameters' device");
    adamStep(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
             amsgrad ? max_exp_avg_sqs[i] : at::Tensor(), steps[i], lr, beta1, beta2, weight_decay,
             eps, amsgrad, maximize, grad_scale, found_inf, decoupled);
  }
}

template <bool Decoupled>
void fused_adam_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                 at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList steps,
                 double lr, double beta1, double beta2, double weight_decay, double eps,
                 bool amsgrad, bool maximize, const c10::optional<at::Tensor>& grad_scale,
                 const c10::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  // A number lr goes to the device as a fill, never as a copy of host memory.
  at::Tensor lr_t =
      at::full({}, lr,
               params[0].options().dtype(params[0].scalar_type() == c10::kDouble ? c10::kDouble
                                                                                 : c10::kFloat));
  fusedAdam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr_t, beta1, beta2,
            weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, Decoupled);
}

template <bool Decoupled>
void fused_adam_tensor_lr(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                          at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                          at::TensorList steps, const at::Tensor& lr, double beta1, double beta2,
                          double weight_decay, double eps, bool amsgrad, bool maximize,
                          const c10::optional<at::Tensor>& grad_scale,
                          const c10::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  if (lr.is_cpu()) {
    fused_adam_<Decoupled>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                           lr.item<double>(), beta1, beta2, weight_decay, eps, amsgrad, maximize,
                           grad_scale, found_inf);
    return;
  }
  TORCH_CHECK(lr.device() == params[0].device(), "lr must be on the same GPU device as the params");
  fusedAdam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2,
            weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, Decoupled);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", amp_unscale_);
  m.impl("_amp_update_scale_", amp_update_scale_);
  m.impl("_fused_adamw_", fused_adam_<true>);
  m.impl("_fused_adamw_.tensor_lr", fused_adam_tensor_lr<true>);
  m.impl("_fused_adam_", fused_adam_<false>);
  m.impl("_fused_adam_.tensor_lr", fused_adam_tensor_lr<false>);
}

}  // namespace
}  // namespace accel
