// The fused optimizer kernels: one Adam/AdamW step over a parameter and its state in a single
// pass (torch._fused_adam_ / _fused_adamw_, i.e. Adam(fused=True), and HF Trainer's default
// "adamw_torch_fused"). The step count, a tensor lr, GradScaler's scale and found_inf stay on
// the device and the kernel reads them itself, so a step never synchronises with the host.
#pragma once

#include <cmath>

#include "kernels/dtype.h"

namespace accel::kernels {

struct AdamDesc {
  // param, grad, exp_avg, exp_avg_sq and max_exp_avg_sq share this floating dtype and are
  // contiguous, numel elements each.
  DType dtype = DType::Float;
  int64_t numel = 0;
  char* param = nullptr;
  char* grad = nullptr;  // written back unscaled when grad_scale is set, as CUDA's kernel does
  char* exp_avg = nullptr;
  char* exp_avg_sq = nullptr;
  char* max_exp_avg_sq = nullptr;     // amsgrad only, else null
  const float* step = nullptr;        // the step count, already incremented for this step
  const double* lr_tensor = nullptr;  // a device lr (float64), or null to use lr
  double lr = 0, beta1 = 0, beta2 = 0, weight_decay = 0, eps = 0;
  const float* grad_scale = nullptr;  // optional
  const float* found_inf = nullptr;   // optional: non-zero skips the step entirely
  bool maximize = false;
  bool decoupled = false;  // AdamW: the parameter decays, instead of L2 added to the gradient
};

// Elements [i * run, (i + 1) * run): the bias corrections are computed once per run (a whole
// chunk on the host, one element per CUDA thread), the element math as CUDA's fused kernel.
template <class T>
struct AdamOp {
  AdamDesc d;
  int64_t run;

  ACCEL_HD int64_t elementsPerIndex() const { return run; }

  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    if (d.found_inf != nullptr && *d.found_inf != 0.0f) return true;
    const double lr = d.lr_tensor != nullptr ? *d.lr_tensor : d.lr;
    const double step = static_cast<double>(*d.step);
    const A step_size = static_cast<A>(lr / (1.0 - std::pow(d.beta1, step)));
    const A bc2_sqrt = static_cast<A>(std::sqrt(1.0 - std::pow(d.beta2, step)));
    const A beta1 = static_cast<A>(d.beta1), beta2 = static_cast<A>(d.beta2);
    const A decay = static_cast<A>(d.weight_decay), eps = static_cast<A>(d.eps);
    const A lr_decay = static_cast<A>(lr * d.weight_decay);
    T* param = reinterpret_cast<T*>(d.param);
    T* grad = reinterpret_cast<T*>(d.grad);
    T* exp_avg = reinterpret_cast<T*>(d.exp_avg);
    T* exp_avg_sq = reinterpret_cast<T*>(d.exp_avg_sq);
    T* max_sq = reinterpret_cast<T*>(d.max_exp_avg_sq);
    const int64_t end = (i + 1) * run < d.numel ? (i + 1) * run : d.numel;
    for (int64_t e = i * run; e < end; ++e) {
      A g = castTo<A>(grad[e]);
      if (d.grad_scale != nullptr) {
        g = g / static_cast<A>(*d.grad_scale);
        grad[e] = castTo<T>(g);
      }
      if (d.maximize) g = -g;
      A p = castTo<A>(param[e]);
      if (decay != A(0)) {
        if (d.decoupled)
          p -= lr_decay * p;
        else
          g += p * decay;
      }
      const A m = beta1 * castTo<A>(exp_avg[e]) + (A(1) - beta1) * g;
      const A v = beta2 * castTo<A>(exp_avg_sq[e]) + (A(1) - beta2) * g * g;
      exp_avg[e] = castTo<T>(m);
      exp_avg_sq[e] = castTo<T>(v);
      A second = v;
      if (max_sq != nullptr) {
        const A old = castTo<A>(max_sq[e]);
        second = old > v ? old : v;
        max_sq[e] = castTo<T>(second);
      }
      const A denom = std::sqrt(second) / bc2_sqrt + eps;
      param[e] = castTo<T>(p - step_size * m / denom);
    }
    return true;
  }
};

struct OptimizerTable {
  rt::Error (*adam)(const AdamDesc& d, rt::Stream stream);
  template <class Exec>
  static OptimizerTable make();
};
const OptimizerTable& optimizerTable();  // the build of the driver in use

// Exec::kAdamRun: elements per index of AdamOp (forEach runs the indices).
template <class Exec>
rt::Error launchAdam(const AdamDesc& d, rt::Stream stream) {
  if (d.numel == 0) return rt::Error::Success;
  if (!isSupported(d.dtype) || d.param == nullptr || d.grad == nullptr || d.exp_avg == nullptr ||
      d.exp_avg_sq == nullptr || d.step == nullptr)
    return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!isFloating<T>) {
      return rt::Error::InvalidValue;
    } else {
      const int64_t run = Exec::kAdamRun;
      return Exec::forEach((d.numel + run - 1) / run, /*serial=*/false, AdamOp<T>{d, run}, stream);
    }
  });
}

template <class Exec>
OptimizerTable OptimizerTable::make() {
  // The cast lets nvcc resolve the function template's address.
  return {static_cast<decltype(OptimizerTable::adam)>(&launchAdam<Exec>)};
}

}  // namespace accel::kernels
