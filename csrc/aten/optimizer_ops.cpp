// Optimizer and AMP ops: torch._fused_adam_ / _fused_adamw_ (Adam/AdamW(fused=True)), and
// GradScaler's _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_. Their small
// control tensors (steps, lr, found_inf, inv_scale, the growth tracker) stay on the device: the AMP
// kernels read them themselves, and so does the fused Adam kernel (kernels/optimizer.h).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/amp.h"
#include "kernels/optimizer.h"

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

// The device scalar `t` as a float32 one-element tensor (GradScaler's and the steps' dtype
// already, so this is usually `t` itself).
at::Tensor floatScalar(const at::Tensor& t, const at::Tensor& param, const char* what) {
  TORCH_CHECK(t.device() == param.device(), "_fused_adam: ", what, " must be on ", param.device(),
              ", got ", t.device());
  TORCH_CHECK(t.numel() == 1, "_fused_adam: ", what, " must have one element, got ", t.numel());
  return t.scalar_type() == c10::kFloat ? t : t.to(c10::kFloat);
}

// One Adam (decoupled = false: L2 weight decay added to the gradient) or AdamW (decoupled:
// the parameter decays) step over a group of parameters, one kernel launch per parameter
// (kernels/optimizer.h). `lr_tensor` is a float64 device scalar, or undefined to use `lr`.
// State of another dtype or layout than the parameter's is staged through contiguous copies.
void fusedAdam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
               at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList steps,
               double lr, const at::Tensor& lr_tensor, double beta1, double beta2,
               double weight_decay, double eps, bool amsgrad, bool maximize,
               const c10::optional<at::Tensor>& grad_scale,
               const c10::optional<at::Tensor>& found_inf, bool decoupled) {
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n &&
                  steps.size() == n && (!amsgrad || max_exp_avg_sqs.size() == n),
              "_fused_adamw_: all tensor lists must have the same length");
  if (n == 0) return;
  const at::Tensor& first = params[0];
  const at::Tensor scale = grad_scale && grad_scale->defined()
                               ? floatScalar(*grad_scale, first, "grad_scale")
                               : at::Tensor();
  const at::Tensor inf = found_inf && found_inf->defined()
                             ? floatScalar(*found_inf, first, "found_inf")
                             : at::Tensor();
  const int device = first.device().index();
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& param = params[i];
    TORCH_CHECK(param.is_privateuseone() && param.device() == first.device(),
                "_fused_adamw_: all tensors must be on ", first.device());
    TORCH_CHECK(c10::isFloatingType(param.scalar_type()),
                "_fused_adamw_: params must be floating point, got ", param.scalar_type());
    TORCH_CHECK(steps[i].device() == param.device(),
                "_fused_adamw_: state_steps must be on the parameters' device");
    const at::Tensor step = floatScalar(steps[i], param, "state_steps");
    std::vector<at::Tensor> state{param, grads[i], exp_avgs[i], exp_avg_sqs[i]};
    if (amsgrad) state.push_back(max_exp_avg_sqs[i]);
    std::vector<at::Tensor> staged;
    for (const at::Tensor& t : state) {
      TORCH_CHECK(t.device() == param.device() && t.numel() == param.numel(),
                  "_fused_adamw_: grads and state must match their parameter's device and size");
      staged.push_back(t.scalar_type() == param.scalar_type() && t.is_contiguous()
                           ? t
                           : t.to(param.scalar_type()).contiguous());
    }
    kernels::AdamDesc d;
    d.dtype = toKernelDType(param.scalar_type());
    d.numel = param.numel();
    d.param = static_cast<char*>(staged[0].data_ptr());
    d.grad = static_cast<char*>(staged[1].data_ptr());
    d.exp_avg = static_cast<char*>(staged[2].data_ptr());
    d.exp_avg_sq = static_cast<char*>(staged[3].data_ptr());
    if (amsgrad) d.max_exp_avg_sq = static_cast<char*>(staged[4].data_ptr());
    d.step = step.const_data_ptr<float>();
    d.lr_tensor = lr_tensor.defined() ? lr_tensor.const_data_ptr<double>() : nullptr;
    d.lr = lr;
    d.beta1 = beta1;
    d.beta2 = beta2;
    d.weight_decay = weight_decay;
    d.eps = eps;
    d.grad_scale = scale.defined() ? scale.const_data_ptr<float>() : nullptr;
    d.found_inf = inf.defined() ? inf.const_data_ptr<float>() : nullptr;
    d.maximize = maximize;
    d.decoupled = decoupled;
    ACCEL_RT_CHECK(kernels::optimizerTable().adam(d, currentRuntimeStream(device)), device);
    for (size_t k = 0; k < state.size(); ++k) {
      // The grad is only written when it is unscaled; the rest always.
      if (!staged[k].is_same(state[k]) && (k != 1 || scale.defined()))
        at::Tensor(state[k]).copy_(staged[k]);
    }
  }
}

template <bool Decoupled>
void fused_adam_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                 at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList steps,
                 double lr, double beta1, double beta2, double weight_decay, double eps,
                 bool amsgrad, bool maximize, const c10::optional<at::Tensor>& grad_scale,
                 const c10::optional<at::Tensor>& found_inf) {
  fusedAdam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, at::Tensor(), beta1,
            beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, Decoupled);
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
  fusedAdam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, 0.0, lr.to(c10::kDouble),
            beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, Decoupled);
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
