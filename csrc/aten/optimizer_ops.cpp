// Optimizer and AMP ops: torch._fused_adam_ / _fused_adamw_ / _fused_sgd_ / _fused_adagrad_
// (Adam/AdamW/SGD/Adagrad(fused=True)), and
// GradScaler's _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_. Their small
// control tensors (steps, lr, found_inf, inv_scale, the growth tracker) stay on the device: the AMP
// kernels read them themselves, and so do the fused optimizer kernels (kernels/optimizer.h).
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
at::Tensor floatScalar(const at::Tensor& t, const at::Tensor& param, const char* op,
                       const char* what) {
  TORCH_CHECK(t.device() == param.device(), op, ": ", what, " must be on ", param.device(),
              ", got ", t.device());
  TORCH_CHECK(t.numel() == 1, op, ": ", what, " must have one element, got ", t.numel());
  return t.scalar_type() == c10::kFloat ? t : t.to(c10::kFloat);
}

// A parameter group's GradScaler tensors, as the kernels read them (float32 device scalars).
struct Scaler {
  Scaler(const at::Tensor& first, const c10::optional<at::Tensor>& grad_scale,
         const c10::optional<at::Tensor>& found_inf, const char* op) {
    if (grad_scale && grad_scale->defined())
      scale = floatScalar(*grad_scale, first, op, "grad_scale");
    if (found_inf && found_inf->defined()) inf = floatScalar(*found_inf, first, op, "found_inf");
  }
  const float* scalePtr() const {
    return scale.defined() ? scale.const_data_ptr<float>() : nullptr;
  }
  const float* infPtr() const { return inf.defined() ? inf.const_data_ptr<float>() : nullptr; }
  at::Tensor scale, inf;
};

// A float64 device lr (a tensor lr), or undefined for a CPU one, whose value `lr` takes.
at::Tensor deviceLr(const at::Tensor& lr, const at::Tensor& param, double* value) {
  if (lr.is_cpu()) {
    *value = lr.item<double>();
    return at::Tensor();
  }
  TORCH_CHECK(lr.device() == param.device(), "lr must be on the same GPU device as the params");
  return lr.to(c10::kDouble);
}

// One parameter's tensors (param, grad, then its state) as the kernels take them: contiguous,
// in the parameter's dtype. A tensor of another dtype or layout is staged through a copy, which
// finish() writes back (the grad only when asked: it changes only when it is unscaled).
class Staged {
 public:
  Staged(std::vector<at::Tensor> tensors, const at::Tensor& first, const char* op)
      : given_(std::move(tensors)) {
    const at::Tensor& param = given_[0];
    TORCH_CHECK(param.is_privateuseone() && param.device() == first.device(), op,
                ": all tensors must be on ", first.device());
    TORCH_CHECK(c10::isFloatingType(param.scalar_type()), op,
                ": params must be floating point, got ", param.scalar_type());
    for (const at::Tensor& t : given_) {
      TORCH_CHECK(t.device() == param.device() && t.numel() == param.numel(), op,
                  ": grads and state must match their parameter's device and size");
      staged_.push_back(t.scalar_type() == param.scalar_type() && t.is_contiguous()
                            ? t
                            : t.to(param.scalar_type()).contiguous());
    }
  }
  char* operator[](size_t i) const { return static_cast<char*>(staged_[i].data_ptr()); }
  kernels::DType dtype() const { return toKernelDType(given_[0].scalar_type()); }
  int64_t numel() const { return given_[0].numel(); }
  void finish(bool grad_written) {
    for (size_t k = 0; k < given_.size(); ++k) {
      if (!staged_[k].is_same(given_[k]) && (k != 1 || grad_written))
        at::Tensor(given_[k]).copy_(staged_[k]);
    }
  }

 private:
  std::vector<at::Tensor> given_, staged_;
};

// The fields every fused step shares, for one staged parameter.
void fillStep(kernels::OptimizerStep& d, const Staged& t, double lr, const at::Tensor& lr_tensor,
              double weight_decay, const Scaler& scaler, bool maximize) {
  d.dtype = t.dtype();
  d.numel = t.numel();
  d.param = t[0];
  d.grad = t[1];
  d.lr_tensor = lr_tensor.defined() ? lr_tensor.const_data_ptr<double>() : nullptr;
  d.lr = lr;
  d.weight_decay = weight_decay;
  d.grad_scale = scaler.scalePtr();
  d.found_inf = scaler.infPtr();
  d.maximize = maximize;
}

// One Adam (decoupled = false: L2 weight decay added to the gradient) or AdamW (decoupled:
// the parameter decays) step over a group of parameters, one kernel launch per parameter
// (kernels/optimizer.h). `lr_tensor` is a float64 device scalar, or undefined to use `lr`.
void fusedAdam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
               at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList steps,
               double lr, const at::Tensor& lr_tensor, double beta1, double beta2,
               double weight_decay, double eps, bool amsgrad, bool maximize,
               const c10::optional<at::Tensor>& grad_scale,
               const c10::optional<at::Tensor>& found_inf, bool decoupled) {
  const char* op = decoupled ? "_fused_adamw_" : "_fused_adam_";
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n &&
                  steps.size() == n && (!amsgrad || max_exp_avg_sqs.size() == n),
              op, ": all tensor lists must have the same length");
  if (n == 0) return;
  const at::Tensor& first = params[0];
  const Scaler scaler(first, grad_scale, found_inf, op);
  const int device = first.device().index();
  for (size_t i = 0; i < n; ++i) {
    std::vector<at::Tensor> state{params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]};
    if (amsgrad) state.push_back(max_exp_avg_sqs[i]);
    Staged t(std::move(state), first, op);
    const at::Tensor step = floatScalar(steps[i], params[i], op, "state_steps");
    kernels::AdamDesc d;
    fillStep(d, t, lr, lr_tensor, weight_decay, scaler, maximize);
    d.exp_avg = t[2];
    d.exp_avg_sq = t[3];
    if (amsgrad) d.max_exp_avg_sq = t[4];
    d.step = step.const_data_ptr<float>();
    d.beta1 = beta1;
    d.beta2 = beta2;
    d.eps = eps;
    d.decoupled = decoupled;
    ACCEL_RT_CHECK(kernels::optimizerTable().adam(d, currentRuntimeStream(device)), device);
    t.finish(scaler.scale.defined());
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
  double value = 0;
  const at::Tensor device_lr = deviceLr(lr, params[0], &value);
  fusedAdam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, value, device_lr, beta1,
            beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, Decoupled);
}

// SGD(fused=True): one launch per parameter; with momentum, the buffers the caller allocated
// start as the gradients on the first step.
void fusedSgd(at::TensorList params, at::TensorList grads, at::TensorList buffers,
              double weight_decay, double momentum, double lr, const at::Tensor& lr_tensor,
              double dampening, bool nesterov, bool maximize, bool is_first_step,
              const c10::optional<at::Tensor>& grad_scale,
              const c10::optional<at::Tensor>& found_inf) {
  const char* op = "_fused_sgd_";
  const size_t n = params.size();
  const bool with_momentum = momentum != 0;
  TORCH_CHECK(grads.size() == n && (!with_momentum || buffers.size() == n), op,
              ": all tensor lists must have the same length");
  if (n == 0) return;
  const at::Tensor& first = params[0];
  const Scaler scaler(first, grad_scale, found_inf, op);
  const int device = first.device().index();
  for (size_t i = 0; i < n; ++i) {
    std::vector<at::Tensor> state{params[i], grads[i]};
    if (with_momentum) state.push_back(buffers[i]);
    Staged t(std::move(state), first, op);
    kernels::SgdDesc d;
    fillStep(d, t, lr, lr_tensor, weight_decay, scaler, maximize);
    if (with_momentum) d.momentum_buffer = t[2];
    d.momentum = momentum;
    d.dampening = dampening;
    d.nesterov = nesterov;
    d.first_step = is_first_step;
    ACCEL_RT_CHECK(kernels::optimizerTable().sgd(d, currentRuntimeStream(device)), device);
    t.finish(scaler.scale.defined());
  }
}

void fused_sgd_(at::TensorList params, at::TensorList grads, at::TensorList buffers,
                double weight_decay, double momentum, double lr, double dampening, bool nesterov,
                bool maximize, bool is_first_step, const c10::optional<at::Tensor>& grad_scale,
                const c10::optional<at::Tensor>& found_inf) {
  fusedSgd(params, grads, buffers, weight_decay, momentum, lr, at::Tensor(), dampening, nesterov,
           maximize, is_first_step, grad_scale, found_inf);
}

void fused_sgd_tensor_lr(at::TensorList params, at::TensorList grads, at::TensorList buffers,
                         double weight_decay, double momentum, const at::Tensor& lr,
                         double dampening, bool nesterov, bool maximize, bool is_first_step,
                         const c10::optional<at::Tensor>& grad_scale,
                         const c10::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  double value = 0;
  const at::Tensor device_lr = deviceLr(lr, params[0], &value);
  fusedSgd(params, grads, buffers, weight_decay, momentum, value, device_lr, dampening, nesterov,
           maximize, is_first_step, grad_scale, found_inf);
}

// Adagrad(fused=True): one launch per parameter, reading its incremented step on the device.
void fusedAdagrad(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                  at::TensorList steps, double lr, const at::Tensor& lr_tensor, double lr_decay,
                  double weight_decay, double eps, bool maximize,
                  const c10::optional<at::Tensor>& grad_scale,
                  const c10::optional<at::Tensor>& found_inf) {
  const char* op = "_fused_adagrad_";
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && state_sums.size() == n && steps.size() == n, op,
              ": all tensor lists must have the same length");
  if (n == 0) return;
  const at::Tensor& first = params[0];
  const Scaler scaler(first, grad_scale, found_inf, op);
  const int device = first.device().index();
  for (size_t i = 0; i < n; ++i) {
    Staged t({params[i], grads[i], state_sums[i]}, first, op);
    const at::Tensor step = floatScalar(steps[i], params[i], op, "state_steps");
    kernels::AdagradDesc d;
    fillStep(d, t, lr, lr_tensor, weight_decay, scaler, maximize);
    d.state_sum = t[2];
    d.step = step.const_data_ptr<float>();
    d.lr_decay = lr_decay;
    d.eps = eps;
    ACCEL_RT_CHECK(kernels::optimizerTable().adagrad(d, currentRuntimeStream(device)), device);
    t.finish(scaler.scale.defined());
  }
}

void fused_adagrad_(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                    at::TensorList steps, double lr, double lr_decay, double weight_decay,
                    double eps, bool maximize, const c10::optional<at::Tensor>& grad_scale,
                    const c10::optional<at::Tensor>& found_inf) {
  fusedAdagrad(params, grads, state_sums, steps, lr, at::Tensor(), lr_decay, weight_decay, eps,
               maximize, grad_scale, found_inf);
}

void fused_adagrad_tensor_lr(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                             at::TensorList steps, const at::Tensor& lr, double lr_decay,
                             double weight_decay, double eps, bool maximize,
                             const c10::optional<at::Tensor>& grad_scale,
                             const c10::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  double value = 0;
  const at::Tensor device_lr = deviceLr(lr, params[0], &value);
  fusedAdagrad(params, grads, state_sums, steps, value, device_lr, lr_decay, weight_decay, eps,
               maximize, grad_scale, found_inf);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", amp_unscale_);
  m.impl("_amp_update_scale_", amp_update_scale_);
  m.impl("_fused_adamw_", fused_adam_<true>);
  m.impl("_fused_adamw_.tensor_lr", fused_adam_tensor_lr<true>);
  m.impl("_fused_adam_", fused_adam_<false>);
  m.impl("_fused_adam_.tensor_lr", fused_adam_tensor_lr<false>);
  m.impl("_fused_sgd_", fused_sgd_);
  m.impl("_fused_sgd_.tensor_lr", fused_sgd_tensor_lr);
  m.impl("_fused_adagrad_", fused_adagrad_);
  m.impl("_fused_adagrad_.tensor_lr", fused_adagrad_tensor_lr);
}

}  // namespace
}  // namespace accel
