// native_layer_norm and its backward. Input checks and the [M, N] split come from ATen's
// _check_layer_norm_inputs; mean and rstd have the shape input.shape[:axis] + [1] *
// len(normalized_shape), and float dtype for half/bfloat16 input (torch.cuda's choice; CPU
// keeps the input's dtype). Mixed dtypes (e.g. bfloat16 input with float weight) go to the
// counted fallback.
#include <ATen/OpMathType.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/norm.h"

namespace accel {
namespace {

using at::Tensor;

bool sameFloating(const Tensor& x, const std::optional<Tensor>& w, const std::optional<Tensor>& b) {
  const c10::ScalarType t = x.scalar_type();
  auto ok = [&](const std::optional<Tensor>& p) {
    return !p || !p->defined() || p->scalar_type() == t;
  };
  return at::isFloatingType(t) && kernelSupports(t) && ok(w) && ok(b);
}

const char* dataOf(const std::optional<Tensor>& t) {
  return t && t->defined() ? static_cast<const char*>(t->const_data_ptr()) : nullptr;
}

c10::DimVector statShape(const Tensor& x, size_t normalized_ndim) {
  c10::DimVector shape(x.sizes().begin(), x.sizes().end() - normalized_ndim);
  shape.append(normalized_ndim, 1);
  return shape;
}

struct LayerNorm {
  static bool native(const Tensor& input, at::IntArrayRef, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, double) {
    return sameFloating(input, weight, bias);
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& input,
                                                    at::IntArrayRef normalized_shape,
                                                    const std::optional<Tensor>& weight,
                                                    const std::optional<Tensor>& bias, double eps) {
    const Tensor empty;
    auto [M, N] = at::native::_check_layer_norm_inputs(
        input, normalized_shape, weight ? *weight : empty, bias ? *bias : empty);
    const Tensor x = input.contiguous();
    std::optional<Tensor> w, b;
    if (weight && weight->defined()) w = weight->contiguous();
    if (bias && bias->defined()) b = bias->contiguous();
    Tensor y = at::empty(x.sizes(), x.options());
    const auto stat = statShape(x, normalized_shape.size());
    const auto stat_options = x.options().dtype(at::toOpMathType(x.scalar_type()));
    Tensor mean = at::empty(stat, stat_options);
    Tensor rstd = at::empty(stat, stat_options);
    kernels::LayerNormDesc d;
    d.x = static_cast<const char*>(x.const_data_ptr());
    d.weight = dataOf(w);
    d.bias = dataOf(b);
    d.y = static_cast<char*>(y.data_ptr());
    d.mean = static_cast<char*>(mean.data_ptr());
    d.rstd = static_cast<char*>(rstd.data_ptr());
    d.dtype = toKernelDType(x.scalar_type());
    d.rows = M;
    d.cols = N;
    d.eps = eps;
    const int device = input.device().index();
    ACCEL_RT_CHECK(kernels::normTable().layer_norm(d, currentRuntimeStream(device)), device);
    return {y, mean, rstd};
  }
};

struct LayerNormBackward {
  static bool native(const Tensor& grad_out, const Tensor& input, at::IntArrayRef,
                     const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, std::array<bool, 3>) {
    return sameFloating(input, weight, bias) && grad_out.scalar_type() == input.scalar_type() &&
           mean.scalar_type() == at::toOpMathType(input.scalar_type()) &&
           rstd.scalar_type() == at::toOpMathType(input.scalar_type());
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& grad_out, const Tensor& input,
                                                    at::IntArrayRef normalized_shape,
                                                    const Tensor& mean, const Tensor& rstd,
                                                    const std::optional<Tensor>& weight,
                                                    const std::optional<Tensor>& bias,
                                                    std::array<bool, 3> mask) {
    const Tensor empty;
    auto [M, N] = at::native::_check_layer_norm_inputs(
        input, normalized_shape, weight ? *weight : empty, bias ? *bias : empty);
    const Tensor x = input.contiguous(), dy = grad_out.contiguous();
    const Tensor m = mean.contiguous(), r = rstd.contiguous();
    std::optional<Tensor> w;
    if (weight && weight->defined()) w = weight->contiguous();
    Tensor dx, dw, db;
    if (mask[0]) dx = at::empty(x.sizes(), x.options());
    if (mask[1] && w) dw = at::empty(w->sizes(), w->options());
    if (mask[2] && bias && bias->defined()) db = at::empty(bias->sizes(), bias->options());
    kernels::LayerNormDesc d;
    d.x = static_cast<const char*>(x.const_data_ptr());
    d.dy = static_cast<const char*>(dy.const_data_ptr());
    d.weight = dataOf(w);
    d.mean = const_cast<char*>(static_cast<const char*>(m.const_data_ptr()));
    d.rstd = const_cast<char*>(static_cast<const char*>(r.const_data_ptr()));
    d.dx = dx.defined() ? static_cast<char*>(dx.data_ptr()) : nullptr;
    d.dweight = dw.defined() ? static_cast<char*>(dw.data_ptr()) : nullptr;
    d.dbias = db.defined() ? static_cast<char*>(db.data_ptr()) : nullptr;
    d.dtype = toKernelDType(x.scalar_type());
    d.rows = M;
    d.cols = N;
    // The weight and bias gradients' partials, freed in stream order after the launch.
    Tensor scratch;
    if (dw.defined() || db.defined()) {
      if (const int64_t bytes = kernels::layerNormParamScratchBytes(M, N, d.dtype)) {
        scratch = at::empty({bytes}, x.options().dtype(at::kByte));
        d.scratch = static_cast<char*>(scratch.data_ptr());
      }
    }
    const int device = input.device().index();
    ACCEL_RT_CHECK(kernels::normTable().layer_norm_backward(d, currentRuntimeStream(device)),
                   device);
    return {dx, dw, db};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<LayerNorm>(m, "native_layer_norm");
  registerNative<LayerNormBackward>(m, "native_layer_norm_backward");
}

}  // namespace
}  // namespace accel
