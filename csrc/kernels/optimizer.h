// The fused optimizer kernels: one Adam/AdamW, SGD or Adagrad step over a parameter and its
// state in a single pass (torch._fused_adam_ / _fused_adamw_ / _fused_sgd_ / _fused_adagrad_,
// i.e. Adam(fused=True), ..., and HF Trainer's default "adamw_torch_fused"). The step count, a
// tensor lr, GradScaler's scale and found_inf stay on the device and the kernels read them
// themselves, so a step never synchronises with the host. The element math is CUDA's fused
// kernels'.
#pragma once

#include <cmath>

#include "kernels/dtype.h"

namespace accel::kernels {

// What every fused step shares: the parameter and its gradient (of one floating dtype,
// contiguous, numel elements; the state buffers of each optimizer likewise), the learning rate,
// GradScaler's tensors and maximize.
struct OptimizerStep {
  DType dtype = DType::Float;
  int64_t numel = 0;
  char* param = nullptr;
  char* grad = nullptr;               // written back unscaled when grad_scale is set, as CUDA's
  const double* lr_tensor = nullptr;  // a device lr (float64), or null to use lr
  double lr = 0, weight_decay = 0;
  const float* grad_scale = nullptr;  // optional
  const float* found_inf = nullptr;   // optional: non-zero skips the step entirely
  bool maximize = false;

  ACCEL_HD bool skipped() const { return found_inf != nullptr && *found_inf != 0.0f; }
  ACCEL_HD double learningRate() const { return lr_tensor != nullptr ? *lr_tensor : lr; }
  // Elements [i * run, (i + 1) * run): a whole chunk on the host, one element per CUDA thread.
  ACCEL_HD int64_t end(int64_t i, int64_t run) const {
    return (i + 1) * run < numel ? (i + 1) * run : numel;
  }
  // Element e's gradient: unscaled (and written back so), negated to maximize.
  template <class T, class A>
  ACCEL_HD A gradient(int64_t e) const {
    T* g = reinterpret_cast<T*>(grad);
    A value = castTo<A>(g[e]);
    if (grad_scale != nullptr) {
      value = value / static_cast<A>(*grad_scale);
      g[e] = castTo<T>(value);
    }
    return maximize ? -value : value;
  }
};

struct AdamDesc : OptimizerStep {
  char* exp_avg = nullptr;
  char* exp_avg_sq = nullptr;
  char* max_exp_avg_sq = nullptr;  // amsgrad only, else null
  const float* step = nullptr;     // the step count, already incremented for this step
  double beta1 = 0, beta2 = 0, eps = 0;
  bool decoupled = false;  // AdamW: the parameter decays, instead of L2 added to the gradient
};

// The bias corrections are computed once per run of elements.
template <class T>
struct AdamOp {
  AdamDesc d;
  int64_t run;

  ACCEL_HD int64_t elementsPerIndex() const { return run; }

  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    if (d.skipped()) return true;
    const double lr = d.learningRate();
    const double step = static_cast<double>(*d.step);
    const A step_size = static_cast<A>(lr / (1.0 - std::pow(d.beta1, step)));
    const A bc2_sqrt = static_cast<A>(std::sqrt(1.0 - std::pow(d.beta2, step)));
    const A beta1 = static_cast<A>(d.beta1), beta2 = static_cast<A>(d.beta2);
    const A decay = static_cast<A>(d.weight_decay), eps = static_cast<A>(d.eps);
    const A lr_decay = static_cast<A>(lr * d.weight_decay);
    T* param = reinterpret_cast<T*>(d.param);
    T* exp_avg = reinterpret_cast<T*>(d.exp_avg);
    T* exp_avg_sq = reinterpret_cast<T*>(d.exp_avg_sq);
    T* max_sq = reinterpret_cast<T*>(d.max_exp_avg_sq);
    for (int64_t e = i * run, end = d.end(i, run); e < end; ++e) {
      A g = d.template gradient<T, A>(e);
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

// SGD with momentum.
struct SgdDesc : OptimizerStep {
  char* momentum_buffer = nullptr;  // null when momentum is 0
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  bool first_step = false;  // the buffer starts as the gradient
};

template <class T>
struct SgdOp {
  SgdDesc d;
  int64_t run;

  ACCEL_HD int64_t elementsPerIndex() const { return run; }

  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    if (d.skipped()) return true;
    const A lr = static_cast<A>(d.learningRate());
    const A decay = static_cast<A>(d.weight_decay), momentum = static_cast<A>(d.momentum);
    const A keep = static_cast<A>(1.0 - d.dampening);
    T* param = reinterpret_cast<T*>(d.param);
    T* buf = reinterpret_cast<T*>(d.momentum_buffer);
    for (int64_t e = i * run, end = d.end(i, run); e < end; ++e) {
      A g = d.template gradient<T, A>(e);
      const A p = castTo<A>(param[e]);
      if (decay != A(0)) g += decay * p;
      if (buf != nullptr) {
        const A b = d.first_step ? g : momentum * castTo<A>(buf[e]) + keep * g;
        buf[e] = castTo<T>(b);
        g = d.nesterov ? g + momentum * b : b;
      }
      param[e] = castTo<T>(p - lr * g);
    }
    return true;
  }
};

// Adagrad.
struct AdagradDesc : OptimizerStep {
  char* state_sum = nullptr;
  const float* step = nullptr;  // already incremented for this step
  double lr_decay = 0, eps = 0;
};

template <class T>
struct AdagradOp {
  AdagradDesc d;
  int64_t run;

  ACCEL_HD int64_t elementsPerIndex() const { return run; }

  ACCEL_HD bool operator()(int64_t i) const {
    using A = OpMath<T>;
    if (d.skipped()) return true;
    const double step = static_cast<double>(*d.step);
    const A clr = static_cast<A>(d.learningRate() / (1.0 + (step - 1.0) * d.lr_decay));
    const A decay = static_cast<A>(d.weight_decay), eps = static_cast<A>(d.eps);
    T* param = reinterpret_cast<T*>(d.param);
    T* sum = reinterpret_cast<T*>(d.state_sum);
    for (int64_t e = i * run, end = d.end(i, run); e < end; ++e) {
      A g = d.template gradient<T, A>(e);
      const A p = castTo<A>(param[e]);
      if (decay != A(0)) g += p * decay;
      const A s = castTo<A>(sum[e]) + g * g;
      sum[e] = castTo<T>(s);
      param[e] = castTo<T>(p - clr * (g / (std::sqrt(s) + eps)));
    }
    return true;
  }
};

struct OptimizerTable {
  rt::Error (*adam)(const AdamDesc& d, rt::Stream stream);
  rt::Error (*sgd)(const SgdDesc& d, rt::Stream stream);
  rt::Error (*adagrad)(const AdagradDesc& d, rt::Stream stream);
  template <class Exec>
  static OptimizerTable make();
};
const OptimizerTable& optimizerTable();  // the build of the driver in use

// Op<T> over a descriptor's numel elements, Exec::kOptimizerRun elements per index (forEach
// runs the indices); the descriptor's pointers were checked by the caller.
template <class Exec, template <class> class Op, class Desc>
rt::Error launchOptimizer(const Desc& d, rt::Stream stream) {
  if (d.numel == 0) return rt::Error::Success;
  if (!isSupported(d.dtype) || d.param == nullptr || d.grad == nullptr)
    return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!isFloating<T>) {
      return rt::Error::InvalidValue;
    } else {
      const int64_t run = Exec::kOptimizerRun;
      return Exec::forEach((d.numel + run - 1) / run, /*serial=*/false, Op<T>{d, run}, stream);
    }
  });
}

template <class Exec>
rt::Error launchAdam(const AdamDesc& d, rt::Stream stream) {
  if (d.exp_avg == nullptr || d.exp_avg_sq == nullptr || d.step == nullptr)
    return rt::Error::InvalidValue;
  return launchOptimizer<Exec, AdamOp>(d, stream);
}

template <class Exec>
rt::Error launchSgd(const SgdDesc& d, rt::Stream stream) {
  return launchOptimizer<Exec, SgdOp>(d, stream);
}

template <class Exec>
rt::Error launchAdagrad(const AdagradDesc& d, rt::Stream stream) {
  if (d.state_sum == nullptr || d.step == nullptr) return rt::Error::InvalidValue;
  return launchOptimizer<Exec, AdagradOp>(d, stream);
}

template <class Exec>
OptimizerTable OptimizerTable::make() {
  // The casts let nvcc resolve the function templates' addresses.
  return {static_cast<decltype(OptimizerTable::adam)>(&launchAdam<Exec>),
          static_cast<decltype(OptimizerTable::sgd)>(&launchSgd<Exec>),
          static_cast<decltype(OptimizerTable::adagrad)>(&launchAdagrad<Exec>)};
}

}  // namespace accel::kernels
