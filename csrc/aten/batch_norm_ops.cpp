// Batch norm, forward (training with or without running stats, and eval) and backward, on the
// batch norm kernels (kernels/batch_norm.h: a few launches per call). The kernels compute in
// the input's opmath type (float for half/bfloat16) and take their per-channel vectors in it:
// parameters and running statistics of another dtype go through opmath copies. save_mean and
// save_invstd have shape [C] in training, the parameters' dtype, and are empty in eval, as on
// CPU.
#include <ATen/OpMathType.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_batch_norm_backward.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/batch_norm.h"

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
                "batch_norm: evaluation mode needs running_mean and running_var");
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

// t as the kernels' [N, C, S] (the spatial dimensions collapsed into S), if its strides allow.
bool describe(const Tensor& t, kernels::BatchNormTensor& out) {
  out.data = static_cast<char*>(const_cast<void*>(t.const_data_ptr()));
  out.stride_n = t.stride(0);
  out.stride_c = t.stride(1);
  out.stride_s = 1;
  int64_t expected = -1;  // the stride the next outer spatial dim of size > 1 must have
  for (int64_t d = t.dim() - 1; d >= 2; --d) {
    if (t.size(d) == 1) continue;
    if (expected < 0) {
      out.stride_s = t.stride(d);
    } else if (t.stride(d) != expected) {
      return false;
    }
    expected = t.stride(d) * t.size(d);
  }
  return true;
}

// t itself when its strides fit the kernels, else a contiguous copy.
Tensor described(const Tensor& t, kernels::BatchNormTensor& out) {
  if (describe(t, out)) return t;
  const Tensor dense = t.contiguous();
  describe(dense, out);
  return dense;
}

// A per-channel vector as the kernels read it: contiguous, in opmath `acc`.
Tensor channelVector(const Tensor& v, at::ScalarType acc) {
  return v.to(acc).contiguous().view({-1});
}

const char* dataOf(const std::optional<Tensor>& t) {
  return given(t) ? static_cast<const char*>(t->const_data_ptr()) : nullptr;
}

// A running statistic the kernel updates in place: the tensor itself, or an opmath copy that
// finish() writes back.
struct RunningStat {
  Tensor given, work;
  RunningStat(const std::optional<Tensor>& t, at::ScalarType acc) {
    if (!accel::given(t)) return;
    given = *t;
    work = t->scalar_type() == acc && t->is_contiguous() ? *t : channelVector(*t, acc);
  }
  char* data() const { return work.defined() ? static_cast<char*>(work.data_ptr()) : nullptr; }
  void finish() const {
    if (work.defined() && !work.is_same(given)) given.copy_(work.view_as(given));
  }
};

kernels::BatchNormDesc baseDesc(const Tensor& x, bool training, double eps) {
  kernels::BatchNormDesc d;
  d.dtype = toKernelDType(x.scalar_type());
  d.batch = x.size(0);
  d.channels = x.size(1);
  d.spatial = c10::multiply_integers(x.sizes().slice(2));
  d.training = training;
  d.eps = eps;
  return d;
}

// Runs a forward or backward: the workspace it asks for, then the launch.
void launch(kernels::BatchNormDesc& d, bool backward, const Tensor& on) {
  const int device = on.device().index();
  const rt::Stream stream = currentRuntimeStream(device);
  const auto& table = kernels::batchNormTable();
  const int64_t bytes = table.workspace_bytes(d, backward, stream);
  Tensor workspace;
  if (bytes > 0) {
    workspace = at::empty({bytes}, on.options().dtype(at::kByte));
    d.workspace = static_cast<char*>(workspace.data_ptr());
  }
  ACCEL_RT_CHECK((backward ? table.backward : table.forward)(d, stream), device);
}

Triple batchNorm(const Tensor& input, const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                 const std::optional<Tensor>& running_var, bool training, double momentum,
                 double eps) {
  checkInput(input, weight, bias, running_mean, running_var, training);
  const at::ScalarType acc = opmath(input);
  const at::ScalarType stats = statsDType(input, weight, running_mean);
  kernels::BatchNormDesc d = baseDesc(input, training, eps);
  d.momentum = momentum;
  d.round_stats = stats != acc;
  const Tensor x = described(input, d.x);
  const Tensor y = at::empty_like(x);
  describe(y, d.y);
  std::optional<Tensor> w, b;
  if (given(weight)) w = channelVector(*weight, acc);
  if (given(bias)) b = channelVector(*bias, acc);
  d.weight = dataOf(w);
  d.bias = dataOf(b);
  const RunningStat rm(running_mean, acc), rv(running_var, acc);
  d.running_mean = rm.data();
  d.running_var = rv.data();
  Tensor mean, invstd;
  if (training) {
    mean = at::empty({d.channels}, input.options().dtype(acc));
    invstd = at::empty({d.channels}, input.options().dtype(acc));
    d.mean = static_cast<char*>(mean.data_ptr());
    d.invstd = static_cast<char*>(invstd.data_ptr());
  }
  launch(d, /*backward=*/false, input);
  if (!training) {
    const Tensor none = at::empty({0}, input.options().dtype(stats));
    return {y, none, none.clone()};
  }
  rm.finish();
  rv.finish();
  return {y, mean.to(stats), invstd.to(stats)};
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
    kernels::BatchNormDesc d = baseDesc(input, train, eps);
    // Training reads the saved statistics, evaluation the running ones (as the forward did).
    Tensor mean, second;
    if (train) {
      TORCH_CHECK(given(save_mean) && given(save_invstd),
                  "batch_norm_backward: training needs save_mean and save_invstd");
      mean = channelVector(*save_mean, acc);
      second = channelVector(*save_invstd, acc);
      d.mean = static_cast<char*>(mean.data_ptr());
      d.invstd = static_cast<char*>(second.data_ptr());
    } else {
      TORCH_CHECK(given(running_mean) && given(running_var),
                  "batch_norm_backward: evaluation needs running_mean and running_var");
      mean = channelVector(*running_mean, acc);
      second = channelVector(*running_var, acc);
      d.running_mean = static_cast<char*>(mean.data_ptr());
      d.running_var = static_cast<char*>(second.data_ptr());
    }
    const Tensor x = described(input, d.x);
    const Tensor dy = described(grad_out.to(input.scalar_type()), d.dy);
    std::optional<Tensor> w;
    if (given(weight)) w = channelVector(*weight, acc);
    d.weight = dataOf(w);
    Tensor grad_input, grad_weight, grad_bias;
    if (mask[0]) {
      grad_input = at::empty_like(x);
      describe(grad_input, d.dx);
    }
    if (mask[1]) {
      grad_weight = at::empty({d.channels}, input.options().dtype(acc));
      d.dweight = static_cast<char*>(grad_weight.data_ptr());
    }
    if (mask[2]) {
      grad_bias = at::empty({d.channels}, input.options().dtype(acc));
      d.dbias = static_cast<char*>(grad_bias.data_ptr());
    }
    launch(d, /*backward=*/true, input);
    const at::ScalarType param = given(weight) ? weight->scalar_type() : input.scalar_type();
    if (mask[1]) grad_weight = grad_weight.to(param);
    if (mask[2]) grad_bias = grad_bias.to(param);
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
