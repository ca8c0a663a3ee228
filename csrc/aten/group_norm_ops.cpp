// native_group_norm and its backward, composed of native accel ops (layer norm's kernels over
// rows of one (sample, group) each, the channels' weight and bias broadcast, per-channel sums
// for the parameters' gradients),
// so they run on both drivers with no CPU fallback. Arithmetic is in the input's opmath type
// (float for half/bfloat16); mean and rstd have shape [N, group] and the input's dtype, or
// float when a half/bfloat16 input comes with float parameters, as on CPU.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/native_layer_norm_backward.h>
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
    // Each (sample, group) is a row of D elements: layer norm's kernel normalizes it in one
    // pass, then one more applies the channel's weight and bias. The group's size is spelled
    // out: a -1 cannot be inferred in an empty batch.
    const int64_t D = C / group * HxW;
    const Tensor x = input.reshape({N * group, D}).to(type);
    auto [xhat, mean, rstd] = at::native_layer_norm(x, {D}, std::nullopt, std::nullopt, eps);
    Tensor y = xhat.view({N, C, HxW});
    if (given(weight) && given(bias)) {
      y = at::addcmul(perChannel(*bias, type), y, perChannel(*weight, type));
    } else if (given(weight)) {
      y = y * perChannel(*weight, type);
    } else if (given(bias)) {
      y = y + perChannel(*bias, type);
    }
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
    const int64_t D = C / group * HxW;
    const Tensor dy = grad_out.reshape({N, C, HxW}).to(type);
    const Tensor x = input.reshape({N * group, D}).to(type);
    const Tensor m = mean.reshape({N * group, 1}).to(type);
    const Tensor r = rstd.reshape({N * group, 1}).to(type);
    Tensor dx, dw, db;
    if (mask[0]) {
      // d/dx of (x - mean) * rstd per row of D elements is layer norm's, with the weight
      // applied per channel first: rstd (g - mean(g) - xhat mean(g xhat)).
      const Tensor g = (given(weight) ? dy * perChannel(*weight, type) : dy).view({N * group, D});
      dx = std::get<0>(at::native_layer_norm_backward(g, x, {D}, m, r, std::nullopt, std::nullopt,
                                                      {true, false, false}))
               .view(input.sizes())
               .to(input.scalar_type());
    }
    const auto param = given(weight) ? weight->scalar_type() : input.scalar_type();
    if (mask[1]) dw = (dy * ((x - m) * r).view({N, C, HxW})).sum({0, 2}).to(param);
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
