// native_group_norm and its backward, composed of native accel ops (a mean and variance per
// (sample, group), broadcast elementwise math, per-channel sums for the parameters' gradients),
// so they run on both drivers with no CPU fallback. Arithmetic is in the input's opmath type
// (float for half/bfloat16); mean and rstd have shape [N, group] and the input's dtype, or
// float when a half/bfloat16 input comes with float parameters, as on CPU.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/var_mean.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <tuple>

#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;
using Triple = std::tuple<Tensor, Tensor, Tensor>;

// An empty batch is native; empty groups (HxW = 0) keep CPU's statistics on the fallback.
bool supported(const Tensor& input, const std::optional<Tensor>& weight,
               const std::optional<Tensor>& bias, int64_t N) {
  return floatingKernelType(input) && (input.numel() > 0 || N == 0) && floatingOrAbsent(weight) &&
         floatingOrAbsent(bias);
}

// ATen's check_group_norm_inputs.
void checkInputs(const Tensor& input, const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, int64_t C, int64_t group) {
  TORCH_CHECK(group > 0, "Expected num groups to be greater than 0, got ", group);
  TORCH_CHECK(C % group == 0,
              "Expected number of channels in input to be divisible by num_groups, but got input "
              "of shape ",
              input.sizes(), " and num_groups=", group);
  for (const auto* t : {&weight, &bias}) {
    if (!given(*t)) continue;
    TORCH_CHECK((*t)->dim() == 1 && (*t)->numel() == C,
                "Expected weight to be a vector of size equal to the number of channels in "
                "input, but got weight of shape ",
                (*t)->sizes(), " and input of shape ", input.sizes());
  }
}

// The dtype of mean and rstd (param_scalar_type).
at::ScalarType statsType(const Tensor& input, const std::optional<Tensor>& weight) {
  const bool mixed = at::isReducedFloatingType(input.scalar_type()) && given(weight) &&
                     weight->scalar_type() == at::kFloat;
  return mixed ? at::kFloat : input.scalar_type();
}

// A per-channel vector as [1, C, 1] in `type`.
Tensor perChannel(const Tensor& v, at::ScalarType type) { return v.to(type).view({1, -1, 1}); }

struct NativeGroupNorm {
  static bool native(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, int64_t N, int64_t, int64_t, int64_t,
                     double) {
    return supported(input, weight, bias, N);
  }
  static Triple compute(const Tensor& input, const std::optional<Tensor>& weight,
                        const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW,
                        int64_t group, double eps) {
    checkInputs(input, weight, bias, C, group);
    TORCH_CHECK(input.numel() == N * C * HxW, "native_group_norm: expected input of ", N * C * HxW,
                " elements (N=", N, ", C=", C, ", HxW=", HxW, "), got ", input.sizes());
    const auto type = at::toOpMathType(input.scalar_type());
    // The group's size spelled out: a -1 cannot be inferred in an empty batch.
    const Tensor x = input.reshape({N, group, C / group * HxW}).to(type);
    auto [var, mean] = at::var_mean(x, {2}, /*correction=*/0, /*keepdim=*/true);
    const Tensor rstd = (var + eps).rsqrt();
    Tensor y = ((x - mean) * rstd).view({N, C, HxW});
    if (given(weight)) y = y * perChannel(*weight, type);
    if (given(bias)) y = y + perChannel(*bias, type);
    const auto stats = statsType(input, weight);
    return {y.view(input.sizes()).to(input.scalar_type()), mean.view({N, group}).to(stats),
            rstd.view({N, group}).to(stats)};
  }
};

struct NativeGroupNormBackward {
  static bool native(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                     const Tensor& rstd, const std::optional<Tensor>& weight, int64_t N, int64_t,
                     int64_t, int64_t, std::array<bool, 3>) {
    return supported(input, weight, std::nullopt, N) && floatingOrAbsent(grad_out) &&
           floatingOrAbsent(mean) && floatingOrAbsent(rstd);
  }
  static Triple compute(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                        const Tensor& rstd, const std::optional<Tensor>& weight, int64_t N,
                        int64_t C, int64_t HxW, int64_t group, std::array<bool, 3> mask) {
    checkInputs(input, weight, std::nullopt, C, group);
    TORCH_CHECK(input.numel() == N * C * HxW && grad_out.sizes() == input.sizes(),
                "native_group_norm_backward: expected input and grad_out of ", N * C * HxW,
                " elements, got ", input.sizes(), " and ", grad_out.sizes());
    const auto type = at::toOpMathType(input.scalar_type());
    const Tensor dy = grad_out.reshape({N, C, HxW}).to(type);
    const Tensor m = mean.reshape({N, group, 1}).to(type);
    const Tensor r = rstd.reshape({N, group, 1}).to(type);
    const Tensor xhat = (input.reshape({N, group, C / group * HxW}).to(type) - m) * r;
    Tensor dx, dw, db;
    if (mask[0]) {
      const Tensor g =
          (given(weight) ? dy * perChannel(*weight, type) : dy).view({N, group, C / group * HxW});
      // d/dx of (x - mean) * rstd, per group of D elements: rstd (g - mean(g) - xhat
      // mean(g xhat)).
      dx = (r * (g - g.mean({2}, true) - xhat * (g * xhat).mean({2}, true)))
               .view(input.sizes())
               .to(input.scalar_type());
    }
    const auto param = given(weight) ? weight->scalar_type() : input.scalar_type();
    if (mask[1]) dw = (dy * xhat.view({N, C, HxW})).sum({0, 2}).to(param);
    if (mask[2]) db = dy.sum({0, 2}).to(param);
    return {dx, dw, db};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<NativeGroupNorm>(m, "native_group_norm");
  registerNative<NativeGroupNormBackward>(m, "native_group_norm_backward");
}

}  // namespace
}  // namespace accel
