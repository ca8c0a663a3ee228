// Batch norm, forward (training with running stats, and eval) and backward, composed of
// native accel ops (per-channel mean and variance reductions, broadcast elementwise math): no
// kernel of its own yet, so it runs on both drivers with no CPU fallback at the cost of a few
// launches per call. Arithmetic is in the input's opmath type (float for half/bfloat16);
// save_mean/save_invstd have shape [C] in training, the parameters' dtype, and are empty in
// eval, as on CPU.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_batch_norm_backward.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/var_mean.h>
#include <torch/library.h>

#include <algorithm>

#include <array>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;
using Triple = std::tuple<Tensor, Tensor, Tensor>;

bool supported(const Tensor& input, std::initializer_list<const std::optional<Tensor>*> others) {
  if (!floatingKernelType(input)) return false;
  for (const auto* t : others)
    if (!floatingOrAbsent(*t)) return false;
  return true;
}

at::ScalarType opmath(const Tensor& x) { return at::toOpMathType(x.scalar_type()); }

// The reduced dimensions (all but the channel dimension 1) and a per-channel vector's view
// that broadcasts against the input.
c10::DimVector reducedDims(const Tensor& x) {
  c10::DimVector dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}
Tensor perChannel(const Tensor& v, const Tensor& x) {
  c10::DimVector shape(x.dim(), 1);
  shape[1] = x.size(1);
  return v.reshape(shape);
}

void checkInput(const Tensor& input, const std::optional<Tensor>& weight,
                const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                const std::optional<Tensor>& running_var, bool training) {
  TORCH_CHECK(input.dim() >= 2, "batch_norm: expected input with at least 2 dimensions, got ",
              input.dim());
  const int64_t channels = input.size(1);
  auto check = [&](const std::optional<Tensor>& t, const char* name) {
    if (!given(t)) return;
    TORCH_CHECK(t->numel() == channels, "batch_norm: ", name, " should contain ", channels,
                " elements not ", t->numel());
  };
  check(weight, "weight");
  check(bias, "bias");
  check(running_mean, "running_mean");
  check(running_var, "running_var");
  if (training) {
    const int64_t per_channel = input.numel() / std::max<int64_t>(channels, 1);
    TORCH_CHECK(per_channel > 1 || input.numel() == 0,
                "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
  } else {
    TORCH_CHECK(given(running_mean) && given(running_var),
                "batch_norm: running_mean and running_var must be defined in evaluation mode");
  }
}

// The dtype of save_mean/save_invstd: the input's, or the float parameters' of a reduced
// float input with float parameters (mixed, as under autocast).
at::ScalarType statsDType(const Tensor& input, const std::optional<Tensor>& weight,
                          const std::optional<Tensor>& running_mean) {
  if (given(weight))
    return weight->scalar_type() == input.scalar_type() ? input.scalar_type() : opmath(input);
  if (given(running_mean) && running_mean->scalar_type() != input.scalar_type())
    return opmath(input);
  return input.scalar_type();
}

// out = (x - mean) * invstd * weight + bias, in the input's dtype.
Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                 const std::optional<Tensor>& weight, const std::optional<Tensor>& bias) {
  Tensor scale = invstd;
  if (given(weight)) scale = scale * weight->to(invstd.scalar_type());
  Tensor shift = -mean * scale;
  if (given(bias)) shift = shift + bias->to(invstd.scalar_type());
  return (x.to(scale.scalar_type()) * perChannel(scale, x) + perChannel(shift, x))
      .to(x.scalar_type());
}

Triple batchNorm(const Tensor& input, const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                 const std::optional<Tensor>& running_var, bool training, double momentum,
                 double eps) {
  checkInput(input, weight, bias, running_mean, running_var, training);
  const at::ScalarType acc = opmath(input);
  if (!training) {
    const Tensor mean = running_mean->to(acc);
    const Tensor invstd = (running_var->to(acc) + eps).rsqrt();
    const Tensor none =
        at::empty({0}, input.options().dtype(statsDType(input, weight, running_mean)));
    return {normalize(input, mean, invstd, weight, bias), none, none.clone()};
  }
  const Tensor x = input.to(acc);
  const auto dims = reducedDims(x);
  auto [var, mean_acc] = at::var_mean(x, dims, /*correction=*/0, /*keepdim=*/false);
  // The saved statistics have the parameters' dtype, and the output is normalized with
  // them as saved (rounded), as on CPU.
  const at::ScalarType stats = statsDType(input, weight, running_mean);
  const Tensor mean = mean_acc.to(stats);
  const Tensor invstd = (var + eps).rsqrt().to(stats);
  if (given(running_mean) || given(running_var)) {
    const int64_t n = x.numel() / x.size(1);
    if (given(running_mean)) {
      Tensor rm = *running_mean;
      rm.mul_(1 - momentum).add_(mean.to(rm.scalar_type()), momentum);
    }
    if (given(running_var)) {
      Tensor rv = *running_var;
      const double unbias = static_cast<double>(n) / static_cast<double>(n - 1);
      rv.mul_(1 - momentum).add_(var.to(rv.scalar_type()), momentum * unbias);
    }
  }
  return {normalize(input, mean.to(acc), invstd.to(acc), weight, bias), mean, invstd};
}

struct NativeBatchNorm {
  static bool native(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool, double, double) {
    return supported(input, {&weight, &bias, &running_mean, &running_var});
  }
  static Triple compute(const Tensor& input, const std::optional<Tensor>& weight,
                        const std::optional<Tensor>& bias,
                        const std::optional<Tensor>& running_mean,
                        const std::optional<Tensor>& running_var, bool training, double momentum,
                        double eps) {
    return batchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps);
  }
};

// The functionalization-friendly schemas torch.compile's decompositions reach.
struct BatchNormLegit {
  static bool native(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, Tensor& running_mean, Tensor& running_var,
                     bool, double, double) {
    const std::optional<Tensor> rm = running_mean, rv = running_var;
    return supported(input, {&weight, &bias, &rm, &rv});
  }
  static Triple compute(const Tensor& input, const std::optional<Tensor>& weight,
                        const std::optional<Tensor>& bias, Tensor& running_mean,
                        Tensor& running_var, bool training, double momentum, double eps) {
    return batchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps);
  }
};

struct BatchNormLegitNoStats {
  static bool native(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, bool, double, double) {
    return supported(input, {&weight, &bias});
  }
  static Triple compute(const Tensor& input, const std::optional<Tensor>& weight,
                        const std::optional<Tensor>& bias, bool training, double momentum,
                        double eps) {
    TORCH_CHECK(training, "batch_norm: evaluation mode needs running statistics");
    return batchNorm(input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
  }
};

struct NativeBatchNormBackward {
  static bool native(const Tensor& grad_out, const Tensor& input,
                     const std::optional<Tensor>& weight, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var,
                     const std::optional<Tensor>& save_mean,
                     const std::optional<Tensor>& save_invstd, bool, double, std::array<bool, 3>) {
    const std::optional<Tensor> g = grad_out;
    return supported(input, {&g, &weight, &running_mean, &running_var, &save_mean, &save_invstd});
  }
  static Triple compute(const Tensor& grad_out, const Tensor& input,
                        const std::optional<Tensor>& weight,
                        const std::optional<Tensor>& running_mean,
                        const std::optional<Tensor>& running_var,
                        const std::optional<Tensor>& save_mean,
                        const std::optional<Tensor>& save_invstd, bool train, double eps,
                        std::array<bool, 3> mask) {
    const at::ScalarType acc = opmath(input);
    Tensor mean, invstd;
    if (train) {
      TORCH_CHECK(given(save_mean) && given(save_invstd),
                  "batch_norm_backward: training needs save_mean and save_invstd");
      mean = save_mean->to(acc);
      invstd = save_invstd->to(acc);
    } else {
      TORCH_CHECK(given(running_mean) && given(running_var),
                  "batch_norm_backward: evaluation needs running_mean and running_var");
      mean = running_mean->to(acc);
      invstd = (running_var->to(acc) + eps).rsqrt();
    }
    const Tensor x = input.to(acc);
    const Tensor g = grad_out.to(acc);
    const auto dims = reducedDims(x);
    const Tensor xhat = (x - perChannel(mean, x)) * perChannel(invstd, x);
    const Tensor w = given(weight) ? weight->to(acc) : at::ones({x.size(1)}, x.options());
    Tensor grad_input, grad_weight, grad_bias;
    const bool need_sums = mask[1] || mask[2] || (mask[0] && train);
    Tensor sum_g, sum_gx;
    if (need_sums) {
      sum_g = g.sum(dims);
      sum_gx = (g * xhat).sum(dims);
    }
    if (mask[0]) {
      const Tensor scale = perChannel(w * invstd, x);
      if (train) {
        const double n = static_cast<double>(x.numel() / x.size(1));
        grad_input = scale * (g - perChannel(sum_g / n, x) - xhat * perChannel(sum_gx / n, x));
      } else {
        grad_input = g * scale;
      }
      grad_input = grad_input.to(input.scalar_type());
    }
    const at::ScalarType param = given(weight) ? weight->scalar_type() : input.scalar_type();
    if (mask[1]) grad_weight = sum_gx.to(param);
    if (mask[2]) grad_bias = sum_g.to(param);
    return {grad_input, grad_weight, grad_bias};
  }
};

// The forms torch.export and torch.compile trace batch norm into: native_batch_norm in training
// mode (with_update) or with the running statistics (no_update), plus an empty reserve, and
// its backward.
Tensor emptyReserve(const Tensor& input) {
  return at::empty({0}, input.options().dtype(at::kByte));
}

struct BatchNormWithUpdate {
  static bool native(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                     Tensor&, Tensor&, double, double) {
    return true;
  }
  static std::tuple<Tensor, Tensor, Tensor, Tensor> compute(
      const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
      Tensor& running_mean, Tensor& running_var, double momentum, double eps) {
    auto [out, mean, invstd] =
        at::native_batch_norm(input, weight, bias, running_mean, running_var, true, momentum, eps);
    return {out, mean, invstd, emptyReserve(input)};
  }
};

struct BatchNormNoUpdate {
  static bool native(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                     const std::optional<Tensor>&, const std::optional<Tensor>&, double, double) {
    return true;
  }
  static std::tuple<Tensor, Tensor, Tensor, Tensor> compute(
      const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
      const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
      double momentum, double eps) {
    TORCH_CHECK(given(running_mean) && given(running_var),
                "_batch_norm_no_update: running_mean and running_var are required");
    auto [out, mean, invstd] =
        at::native_batch_norm(input, weight, bias, running_mean, running_var, false, momentum, eps);
    return {out, mean, invstd, emptyReserve(input)};
  }
};

struct BatchNormBackward {
  static bool native(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
                     const std::optional<Tensor>&, const std::optional<Tensor>&,
                     const std::optional<Tensor>&, bool, double, std::array<bool, 3>,
                     const Tensor&) {
    return true;
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(
      const Tensor& grad_out, const Tensor& input, const Tensor& weight,
      const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
      const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_var, bool update,
      double eps, std::array<bool, 3> mask, const Tensor&) {
    return at::native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                          save_mean, save_var, update, eps, mask);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<NativeBatchNorm>(m, "native_batch_norm");
  registerNative<BatchNormLegit>(m, "_native_batch_norm_legit");
  registerNative<BatchNormLegitNoStats>(m, "_native_batch_norm_legit.no_stats");
  registerNative<NativeBatchNormBackward>(m, "native_batch_norm_backward");
  registerNative<BatchNormWithUpdate>(m, "_batch_norm_with_update");
  registerNative<BatchNormNoUpdate>(m, "_batch_norm_no_update");
  registerNative<BatchNormBackward>(m, "batch_norm_backward");
}

}  // namespace
}  // namespace accel
