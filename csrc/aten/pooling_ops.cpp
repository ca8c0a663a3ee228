// max_pool2d_with_indices and its backward, composed of native accel ops: the input padded
// with -inf, its windows gathered as a strided view, a max over each window (NaN wins, the
// first maximum on ties, as on CPU), and the backward as a scatter-add of the gradient at
// the saved indices. Shape checks and errors are ATen's own (ATen/native/Pool.h). Float
// dtypes only; the rest goes through the counted fallback.
#include <ATen/TensorOperators.h>
#include <ATen/native/Pool.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/floor_divide.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <limits>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// The pooling arguments, with PyTorch's defaults and checks, for a 3-D or 4-D input.
struct Pool2d {
  int64_t kH, kW, sH, sW, pH, pW, dH, dW;
  int64_t batch, channels, inH, inW, outH, outW;

  Pool2d(const Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
    TORCH_CHECK(kernel.size() == 1 || kernel.size() == 2,
                "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
    TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2,
                "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
    TORCH_CHECK(padding.size() == 1 || padding.size() == 2,
                "max_pool2d: padding must either be a single int, or a tuple of two ints");
    TORCH_CHECK(dilation.size() == 1 || dilation.size() == 2,
                "max_pool2d: dilation must be either a single int, or a tuple of two ints");
    TORCH_CHECK(input.dim() == 3 || input.dim() == 4,
                "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                "but got:",
                input.sizes());
    auto second = [](at::IntArrayRef v) { return v.size() == 1 ? v[0] : v[1]; };
    kH = kernel[0];
    kW = second(kernel);
    sH = stride.empty() ? kH : stride[0];
    sW = stride.empty() ? kW : second(stride);
    pH = padding[0];
    pW = second(padding);
    dH = dilation[0];
    dW = second(dilation);
    batch = input.dim() == 4 ? input.size(0) : 1;
    channels = input.size(-3);
    inH = input.size(-2);
    inW = input.size(-1);
    outH = at::native::pooling_output_shape<int64_t>(inH, kH, pH, sH, dH, ceil_mode);
    outW = at::native::pooling_output_shape<int64_t>(inW, kW, pW, sW, dW, ceil_mode);
    at::native::pool2d_shape_check(input, kH, kW, sH, sW, pH, pW, dH, dW, channels, inH, inW, outH,
                                   outW, at::MemoryFormat::Contiguous);
  }

  c10::DimVector outShape(const Tensor& input) const {
    c10::DimVector s(input.sizes().begin(), input.sizes().end() - 2);
    s.push_back(outH);
    s.push_back(outW);
    return s;
  }
};

bool floating(const Tensor& t) {
  return at::isFloatingType(t.scalar_type()) && kernelSupports(t.scalar_type());
}

struct MaxPool2dWithIndices {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef,
                     at::IntArrayRef, bool) {
    return floating(self);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, at::IntArrayRef kernel_size,
                                            at::IntArrayRef stride, at::IntArrayRef padding,
                                            at::IntArrayRef dilation, bool ceil_mode,
                                            const Output& out, const Output& indices_out) {
    const Pool2d p(self, kernel_size, stride, padding, dilation, ceil_mode);
    const Tensor x = self.reshape({p.batch, p.channels, p.inH, p.inW});
    // Padded so that every window lies inside: the left pads, and on the right whatever
    // the last window (ceil_mode) reaches past the input.
    const int64_t needH = (p.outH - 1) * p.sH + p.dH * (p.kH - 1) + 1;
    const int64_t needW = (p.outW - 1) * p.sW + p.dW * (p.kW - 1) + 1;
    const int64_t rightH = std::max<int64_t>(0, needH - p.inH - p.pH);
    const int64_t rightW = std::max<int64_t>(0, needW - p.inW - p.pW);
    const Tensor padded = at::constant_pad_nd(x, {p.pW, rightW, p.pH, rightH},
                                              -std::numeric_limits<double>::infinity())
                              .contiguous();
    const int64_t W = padded.size(3), H = padded.size(2);
    const Tensor windows =
        padded
            .as_strided({p.batch, p.channels, p.outH, p.outW, p.kH, p.kW},
                        {p.channels * H * W, H * W, p.sH * W, p.sW, p.dH * W, p.dW})
            .reshape({p.batch, p.channels, p.outH, p.outW, p.kH * p.kW});
    auto [values, k] = windows.max(-1);
    // The window position k as an index into the unpadded input's H*W plane.
    const Tensor kh = at::floor_divide(k, p.kW);
    const Tensor kw = k - kh * p.kW;
    const auto longs = k.options();
    const Tensor top = (at::arange(p.outH, longs) * p.sH - p.pH).view({p.outH, 1});
    const Tensor left = at::arange(p.outW, longs) * p.sW - p.pW;
    // A window whose input elements are all -inf may pick a padded position: clamped into
    // the input, it names the window's first input element, as CPU does (dilation 1).
    const Tensor row = (top + kh * p.dH).clamp(0, p.inH - 1);
    const Tensor col = (left + kw * p.dW).clamp(0, p.inW - 1);
    const Tensor index = row * p.inW + col;
    const auto shape = p.outShape(self);
    Tensor result = out.allocate(shape, self.options());
    Tensor result_indices = indices_out.allocate(shape, longs, Output::DTypeRule::Exact);
    result.copy_(values.view(shape));
    result_indices.copy_(index.view(shape));
    return {out.finish(result), indices_out.finish(result_indices)};
  }
};

struct MaxPool2dWithIndicesBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, at::IntArrayRef,
                     at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool,
                     const Tensor& indices) {
    return floating(grad_output) && grad_output.scalar_type() == self.scalar_type() &&
           indices.scalar_type() == at::kLong;
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, at::IntArrayRef kernel_size,
                        at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                        bool ceil_mode, const Tensor& indices, const Output& out) {
    const Pool2d p(self, kernel_size, stride, padding, dilation, ceil_mode);
    const auto shape = p.outShape(self);
    TORCH_CHECK(
        grad_output.sizes() == at::IntArrayRef(shape) && indices.sizes() == at::IntArrayRef(shape),
        "max_pool2d_with_indices_backward: expected grad_output and indices of size ",
        at::IntArrayRef(shape), ", got ", grad_output.sizes(), " and ", indices.sizes());
    const Tensor grad = at::zeros({p.batch, p.channels, p.inH * p.inW}, grad_output.options());
    grad.scatter_add_(2, indices.reshape({p.batch, p.channels, -1}),
                      grad_output.reshape({p.batch, p.channels, -1}));
    Tensor result = out.allocate(self.sizes(), grad_output.options());
    result.copy_(grad.view(self.sizes()));
    return out.finish(result);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<MaxPool2dWithIndices>(m, "max_pool2d_with_indices", nullptr,
                                      "max_pool2d_with_indices.out");
  registerForms<MaxPool2dWithIndicesBackward>(m, "max_pool2d_with_indices_backward", nullptr,
                                              "max_pool2d_with_indices_backward.grad_input");
}

}  // namespace
}  // namespace accel
