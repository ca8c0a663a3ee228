// The activations that take parameters (kernels/activation.h) and their backward, in every
// form: leaky_relu, elu (selu and celu call it), hardtanh (its forward is clamp), hardswish,
// hardsigmoid, mish, log_sigmoid, softshrink, hardshrink, threshold, softplus's and logit's
// backward, and prelu, glu and rrelu_with_noise composed of native ops. Floating dtypes; other
// dtypes go to the counted fallback, whose CPU kernel raises CPU's error.
#include <ATen/ops/cat.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/le.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <ATen/TensorOperators.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

#include <limits>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"
#include "kernels/activation.h"

namespace accel {
namespace {

using at::Tensor;
using c10::Scalar;
using kernels::ActivationOp;
using kernels::ActivationParams;

bool real(const Scalar& s) { return !s.isComplex(); }

Tensor forward(ActivationOp op, const Tensor& self, const Tensor& out, const ActivationParams& p) {
  return runElementwise(out, self.scalar_type(), {self},
                        [op, &p](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::activationTable().forward(op, d, p, s);
                        });
}

// grad_input of `op` from the incoming gradient and the forward input (or result), computed in
// their common dtype.
Tensor backward(ActivationOp op, const Tensor& grad, const Tensor& x, const Tensor& out,
                const ActivationParams& p) {
  const c10::Device device = commonDevice({grad, x}, "activation backward");
  const c10::ScalarType t = at::result_type(grad, x);
  return runElementwise(out, t, {asComputeInput(grad, t, device), asComputeInput(x, t, device)},
                        [op, &p](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::activationTable().backward(op, d, p, s);
                        });
}

ActivationParams params(const Scalar& a, const Scalar& b = 0, const Scalar& c = 0) {
  ActivationParams p;
  p.a = a.toDouble();
  p.b = b.toDouble();
  p.c = c.toDouble();
  return p;
}

// --- ops with no parameter ----------------------------------------------------------------
template <ActivationOp Op>
struct Plain {
  static bool native(const Tensor& self) { return floatingKernelType(self); }
  static Tensor compute(const Tensor& self, const Output& out) {
    return forward(Op, self, out.tensor(), {});
  }
};

template <ActivationOp Op>
struct PlainBackward {
  static bool native(const Tensor& g, const Tensor& x) {
    return floatingKernelType(g) && floatingKernelType(x);
  }
  static Tensor compute(const Tensor& g, const Tensor& x, const Output& out) {
    return backward(Op, g, x, out.tensor(), {});
  }
};

// --- ops with one or two Scalar parameters -------------------------------------------------

// softshrink's meta check: lambda in [0, the dtype's largest value] (NaN fails it too).
void checkSoftshrinkLambda(const Tensor& self, const Scalar& lambd) {
  double largest = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "softshrink",
                                  [&] { largest = std::numeric_limits<scalar_t>::max(); });
  const double l = lambd.toDouble();
  TORCH_CHECK(l >= 0 && l <= largest, "lambda must be in range [0, ", largest, "] for input dtype ",
              self.scalar_type(), ", but found ", lambd);
}

template <ActivationOp Op>
struct OneParam {
  static bool native(const Tensor& self, const Scalar& a) {
    return floatingKernelType(self) && real(a);
  }
  static Tensor compute(const Tensor& self, const Scalar& a, const Output& out) {
    if constexpr (Op == ActivationOp::Softshrink) checkSoftshrinkLambda(self, a);
    return forward(Op, self, out.tensor(), params(a));
  }
};

template <ActivationOp Op>
struct OneParamBackward {
  static bool native(const Tensor& g, const Tensor& x, const Scalar& a) {
    return floatingKernelType(g) && floatingKernelType(x) && real(a);
  }
  static Tensor compute(const Tensor& g, const Tensor& x, const Scalar& a, const Output& out) {
    return backward(Op, g, x, out.tensor(), params(a));
  }
};

template <ActivationOp Op>
struct TwoParamBackward {
  static bool native(const Tensor& g, const Tensor& x, const Scalar& a, const Scalar& b) {
    return floatingKernelType(g) && floatingKernelType(x) && real(a) && real(b);
  }
  static Tensor compute(const Tensor& g, const Tensor& x, const Scalar& a, const Scalar& b,
                        const Output& out) {
    return backward(Op, g, x, out.tensor(), params(a, b));
  }
};

// logit's backward; no eps is ATen's eps of -1 (the unclamped logit).
struct LogitBackward {
  static bool native(const Tensor& g, const Tensor& x, std::optional<double>) {
    return floatingKernelType(g) && floatingKernelType(x);
  }
  static Tensor compute(const Tensor& g, const Tensor& x, std::optional<double> eps,
                        const Output& out) {
    ActivationParams p = params(eps.value_or(-1.0));
    p.flag = !(p.a < 0);
    return backward(ActivationOp::Logit, g, x, out.tensor(), p);
  }
};

// hardtanh is clamp, as in ATen.
struct Hardtanh {
  static bool native(const Tensor& self, const Scalar& lo, const Scalar& hi) {
    return floatingKernelType(self) && real(lo) && real(hi);
  }
  static Tensor compute(const Tensor& self, const Scalar& lo, const Scalar& hi, const Output& out) {
    Tensor o = out.tensor();
    return o.defined() ? at::clamp_out(o, self, lo, hi) : at::clamp(self, lo, hi);
  }
};

struct Threshold {
  static bool native(const Tensor& self, const Scalar& th, const Scalar& value) {
    return floatingKernelType(self) && real(th) && real(value);
  }
  static Tensor compute(const Tensor& self, const Scalar& th, const Scalar& value,
                        const Output& out) {
    return forward(ActivationOp::Threshold, self, out.tensor(), params(th, value));
  }
};

struct LeakyReluBackward {
  static bool native(const Tensor& g, const Tensor& x, const Scalar& slope, bool) {
    return floatingKernelType(g) && floatingKernelType(x) && real(slope);
  }
  static Tensor compute(const Tensor& g, const Tensor& x, const Scalar& slope, bool self_is_result,
                        const Output& out) {
    // As CPU and CUDA: from the result, a negative slope could not tell the sides apart.
    TORCH_CHECK(!self_is_result || slope.toDouble() >= 0.0,
                "In-place leakyReLu backward calculation is triggered with a negative slope which "
                "is not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead. File an issue at "
                "https://github.com/pytorch/pytorch if you do require supporting in-place "
                "leakRelu backward calculation with negative slope");
    return backward(ActivationOp::LeakyRelu, g, x, out.tensor(), params(slope));
  }
};

// elu(x) = scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)).
ActivationParams eluParams(const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return params(alpha.toDouble() * scale.toDouble(), scale, input_scale);
}

struct Elu {
  static bool native(const Tensor& self, const Scalar& alpha, const Scalar& scale,
                     const Scalar& input_scale) {
    return floatingKernelType(self) && real(alpha) && real(scale) && real(input_scale);
  }
  static Tensor compute(const Tensor& self, const Scalar& alpha, const Scalar& scale,
                        const Scalar& input_scale, const Output& out) {
    return forward(ActivationOp::Elu, self, out.tensor(), eluParams(alpha, scale, input_scale));
  }
};

struct EluBackward {
  static bool native(const Tensor& g, const Scalar& alpha, const Scalar& scale,
                     const Scalar& input_scale, bool, const Tensor& x) {
    return floatingKernelType(g) && floatingKernelType(x) && real(alpha) && real(scale) &&
           real(input_scale);
  }
  static Tensor compute(const Tensor& g, const Scalar& alpha, const Scalar& scale,
                        const Scalar& input_scale, bool is_result, const Tensor& x,
                        const Output& out) {
    TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0,
                "In-place elu backward calculation is triggered with a negative slope which is "
                "not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead.");
    ActivationParams p = eluParams(alpha, scale, input_scale);
    p.flag = is_result;
    return backward(ActivationOp::Elu, g, x, out.tensor(), p);
  }
};

// log_sigmoid_forward returns (output, buffer); as on CUDA the buffer is empty and the backward
// recomputes from the input.
struct LogSigmoidForward {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self) { return floatingKernelType(self); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, const Output& out,
                                            const Output& buffer) {
    Tensor result = forward(ActivationOp::LogSigmoid, self, out.tensor(), {});
    Tensor buf = buffer.isGiven() ? buffer.tensor() : at::empty({0}, self.options());
    return {result, buf};
  }
};

struct LogSigmoidBackward {
  static bool native(const Tensor& g, const Tensor& x, const Tensor&) {
    return floatingKernelType(g) && floatingKernelType(x);
  }
  static Tensor compute(const Tensor& g, const Tensor& x, const Tensor&, const Output& out) {
    return backward(ActivationOp::LogSigmoid, g, x, out.tensor(), {});
  }
};

// prelu's kernel: x > 0 ? x : weight * x, weight broadcast to x (as the prelu composite shapes
// it). Composed of native ops.
struct PreluKernel {
  static bool native(const Tensor& self, const Tensor& weight) {
    return floatingKernelType(self) && floatingKernelType(weight);
  }
  static Tensor compute(const Tensor& self, const Tensor& weight) {
    return at::where(at::gt(self, 0), self, at::mul(weight, self));
  }
};

struct PreluKernelBackward {
  static bool native(const Tensor& g, const Tensor& self, const Tensor& weight) {
    return floatingKernelType(g) && floatingKernelType(self) && floatingKernelType(weight);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& g, const Tensor& self,
                                            const Tensor& weight) {
    const Tensor positive = at::gt(self, 0);
    return {at::where(positive, g, at::mul(weight, g)),
            at::where(positive, at::zeros_like(self), at::mul(self, g))};
  }
};

// glu: the first half of `dim` times the sigmoid of the second half. Composed of native ops.
int64_t gluDim(const Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(d) % 2 == 0, "Halving dimension must be even, but dimension ", d,
              " is size ", self.size(d));
  return d;
}

struct Glu {
  static bool native(const Tensor& self, int64_t) { return floatingKernelType(self); }
  static Tensor compute(const Tensor& self, int64_t dim, const Output& out) {
    const int64_t d = gluDim(self, dim), h = self.size(d) / 2;
    const Tensor a = self.narrow(d, 0, h), gate = at::sigmoid(self.narrow(d, h, h));
    if (out.form() == Output::Form::Functional) return at::mul(a, gate);
    Tensor target = out.tensor();
    return at::mul_out(target, a, gate);
  }
};

// d/da = g * s, d/db = g * a * s * (1 - s), with s the sigmoid of the second half.
struct GluBackward {
  static bool native(const Tensor& g, const Tensor& self, int64_t) {
    return floatingKernelType(g) && floatingKernelType(self);
  }
  static Tensor compute(const Tensor& g, const Tensor& self, int64_t dim, const Output& out) {
    const int64_t d = gluDim(self, dim), h = self.size(d) / 2;
    const Tensor s = at::sigmoid(self.narrow(d, h, h)), gs = g * s;
    const Tensor grad_a = gs, grad_b = gs * self.narrow(d, 0, h) * (1 - s);
    if (out.form() == Output::Form::Functional) return at::cat({grad_a, grad_b}, d);
    Tensor target = out.tensor();
    return at::cat_out(target, {grad_a, grad_b}, d);
  }
};

// rrelu_with_noise: in training, each element at or below zero is scaled by a slope drawn
// uniformly from [lower, upper), recorded in `noise` (1 elsewhere) for the backward; in
// evaluation, leaky_relu with the mean slope. The draws come from accel's generator, one per
// element as CUDA draws them (CPU draws only for the negative ones, from its own generator).
struct RreluWithNoise {
  static bool native(const Tensor& self, const Tensor& noise) {
    return floatingKernelType(self) && noise.device() == self.device() &&
           noise.scalar_type() == self.scalar_type();
  }
  static Tensor& into(Tensor& out, const Tensor& self, Tensor& noise, const Scalar& lower,
                      const Scalar& upper, bool training, std::optional<at::Generator> gen) {
    TORCH_CHECK(self.sym_sizes() == noise.sym_sizes(),
                "noise tensor shape must match self tensor shape. Got self.shape = ",
                self.sym_sizes(), " noise.shape = ", noise.sym_sizes());
    if (!training) {
      return at::leaky_relu_out(out, self, (lower.toDouble() + upper.toDouble()) / 2);
    }
    const Tensor slope = at::empty_like(self).uniform_(lower.toDouble(), upper.toDouble(), gen);
    noise.copy_(at::where(at::le(self, 0), slope, 1));
    return at::mul_out(out, self, noise);  // self * 1 is self: positive elements pass unchanged
  }
};

struct RreluWithNoiseFunctional : RreluWithNoise {
  static bool native(const Tensor& self, Tensor& noise, const Scalar&, const Scalar&, bool,
                     std::optional<at::Generator>) {
    return RreluWithNoise::native(self, noise);
  }
  static Tensor compute(const Tensor& self, Tensor& noise, const Scalar& lower, const Scalar& upper,
                        bool training, std::optional<at::Generator> gen) {
    Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
    return into(out, self, noise, lower, upper, training, std::move(gen));
  }
};

struct RreluWithNoiseInplace : RreluWithNoise {
  static bool native(Tensor& self, Tensor& noise, const Scalar&, const Scalar&, bool,
                     std::optional<at::Generator>) {
    return RreluWithNoise::native(self, noise);
  }
  static Tensor& compute(Tensor& self, Tensor& noise, const Scalar& lower, const Scalar& upper,
                         bool training, std::optional<at::Generator> gen) {
    return into(self, self, noise, lower, upper, training, std::move(gen));
  }
};

struct RreluWithNoiseOut : RreluWithNoise {
  static bool native(const Tensor& self, Tensor& noise, const Scalar&, const Scalar&, bool,
                     std::optional<at::Generator>, Tensor& out) {
    return RreluWithNoise::native(self, noise) && out.device() == self.device() &&
           out.scalar_type() == self.scalar_type();
  }
  static Tensor& compute(const Tensor& self, Tensor& noise, const Scalar& lower,
                         const Scalar& upper, bool training, std::optional<at::Generator> gen,
                         Tensor& out) {
    at::native::resize_output(out, self.sizes());
    return into(out, self, noise, lower, upper, training, std::move(gen));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<OneParam<ActivationOp::LeakyRelu>>(m, "leaky_relu", "leaky_relu_",
                                                   "leaky_relu.out");
  registerForms<LeakyReluBackward>(m, "leaky_relu_backward", nullptr,
                                   "leaky_relu_backward.grad_input");
  registerForms<Elu>(m, "elu", "elu_", "elu.out");
  registerForms<EluBackward>(m, "elu_backward", nullptr, "elu_backward.grad_input");
  registerForms<Hardtanh>(m, "hardtanh", "hardtanh_", "hardtanh.out");
  registerForms<TwoParamBackward<ActivationOp::Hardtanh>>(m, "hardtanh_backward", nullptr,
                                                          "hardtanh_backward.grad_input");
  registerForms<Plain<ActivationOp::Hardswish>>(m, "hardswish", "hardswish_", "hardswish.out");
  registerForms<PlainBackward<ActivationOp::Hardswish>>(m, "hardswish_backward", nullptr,
                                                        "hardswish_backward.out");
  registerForms<Plain<ActivationOp::Hardsigmoid>>(m, "hardsigmoid", "hardsigmoid_",
                                                  "hardsigmoid.out");
  registerForms<PlainBackward<ActivationOp::Hardsigmoid>>(m, "hardsigmoid_backward", nullptr,
                                                          "hardsigmoid_backward.grad_input");
  registerForms<Plain<ActivationOp::Mish>>(m, "mish", "mish_", "mish.out");
  registerForms<LogSigmoidForward>(m, "log_sigmoid_forward", nullptr, "log_sigmoid_forward.output");
  registerForms<LogSigmoidBackward>(m, "log_sigmoid_backward", nullptr,
                                    "log_sigmoid_backward.grad_input");
  registerForms<OneParam<ActivationOp::Softshrink>>(m, "softshrink", nullptr, "softshrink.out");
  registerForms<OneParamBackward<ActivationOp::Softshrink>>(m, "softshrink_backward", nullptr,
                                                            "softshrink_backward.grad_input");
  registerForms<OneParam<ActivationOp::Hardshrink>>(m, "hardshrink", nullptr, "hardshrink.out");
  registerForms<OneParamBackward<ActivationOp::Hardshrink>>(m, "hardshrink_backward", nullptr,
                                                            "hardshrink_backward.grad_input");
  registerForms<Threshold>(m, "threshold", "threshold_", "threshold.out");
  registerForms<TwoParamBackward<ActivationOp::Softplus>>(m, "softplus_backward", nullptr,
                                                          "softplus_backward.grad_input");
  registerForms<LogitBackward>(m, "logit_backward", nullptr, "logit_backward.grad_input");
  registerNative<PreluKernel>(m, "_prelu_kernel");
  registerNative<PreluKernelBackward>(m, "_prelu_kernel_backward");
  registerForms<Glu>(m, "glu", nullptr, "glu.out");
  registerForms<GluBackward>(m, "glu_backward", nullptr, "glu_backward.grad_input");
  registerNative<RreluWithNoiseFunctional>(m, "rrelu_with_noise");
  registerNative<RreluWithNoiseInplace>(m, "rrelu_with_noise_");
  registerNative<RreluWithNoiseOut>(m, "rrelu_with_noise.out");
}

}  // namespace
}  // namespace accel
