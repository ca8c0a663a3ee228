// Convolutions. ATen routes a PrivateUse1 convolution to convolution_overrideable, whose
// default kernel only raises; ATen has checked the shapes (channels, groups) by then.
// Non-transposed float convolutions of any dimension run natively as im2col + batched gemm,
// composed of native accel ops: the padded input's windows are gathered through a strided
// view, multiplied with each group's weight (BLAS), and the input gradient is the columns'
// gradient scatter-added back (col2im). Transposed convolutions still run the CPU's through
// the counted fallback.
#include <ATen/TensorOperators.h>
#include <ATen/native/ConvUtils.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/zeros.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

#include <array>
#include <tuple>
#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/fallback.h"

namespace accel {
namespace {

bool nativeConv(const at::Tensor& input, const at::Tensor& weight, bool transposed) {
  const c10::ScalarType t = input.scalar_type();
  return !transposed && at::isFloatingType(t) && kernelSupports(t) && weight.scalar_type() == t &&
         input.dim() >= 3 && weight.dim() == input.dim();
}

// One convolution's geometry: N, C, groups, the spatial sizes of the zero-padded input, the
// output and the kernel.
struct ConvShape {
  int64_t batch, channels, groups, out_channels;
  c10::DimVector padded, out, kernel, stride, dilation, padding;

  ConvShape(const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride_,
            c10::IntArrayRef padding_, c10::IntArrayRef dilation_, int64_t groups_)
      : batch(input.size(0)),
        channels(input.size(1)),
        groups(groups_),
        out_channels(weight.size(0)) {
    const int64_t dims = input.dim() - 2;
    auto at = [&](c10::IntArrayRef v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; };
    for (int64_t i = 0; i < dims; ++i) {
      stride.push_back(at(stride_, i));
      padding.push_back(at(padding_, i));
      dilation.push_back(at(dilation_, i));
      kernel.push_back(weight.size(i + 2));
      padded.push_back(input.size(i + 2) + 2 * padding.back());
      out.push_back((padded.back() - dilation.back() * (kernel.back() - 1) - 1) / stride.back() +
                    1);
    }
  }
  int64_t spatial() const { return static_cast<int64_t>(out.size()); }
  int64_t positions() const { return c10::multiply_integers(out); }  // L
  int64_t columns() const {                                          // C/G * prod(kernel)
    return channels / groups * c10::multiply_integers(kernel);
  }
};

// The zero-padded input, contiguous: [N, C, *padded].
at::Tensor padInput(const at::Tensor& input, const ConvShape& s) {
  std::vector<int64_t> pad;
  for (int64_t i = s.spatial() - 1; i >= 0; --i) pad.insert(pad.end(), 2, s.padding[i]);
  return at::constant_pad_nd(input, pad, 0).contiguous();
}

// im2col: [N, G, L, C/G * prod(kernel)] from the padded input.
at::Tensor columns(const at::Tensor& padded, const ConvShape& s) {
  const int64_t d = s.spatial();
  c10::DimVector elem(d);  // element strides of the padded spatial dimensions
  int64_t step = 1;
  for (int64_t i = d - 1; i >= 0; --i) {
    elem[i] = step;
    step *= s.padded[i];
  }
  const int64_t plane = step;
  const int64_t cg = s.channels / s.groups;
  // [N, G, *out, C/G, *kernel]
  c10::DimVector sizes{s.batch, s.groups}, strides{s.channels * plane, cg * plane};
  for (int64_t i = 0; i < d; ++i) {
    sizes.push_back(s.out[i]);
    strides.push_back(s.stride[i] * elem[i]);
  }
  sizes.push_back(cg);
  strides.push_back(plane);
  for (int64_t i = 0; i < d; ++i) {
    sizes.push_back(s.kernel[i]);
    strides.push_back(s.dilation[i] * elem[i]);
  }
  return padded.as_strided(sizes, strides).reshape({s.batch, s.groups, s.positions(), s.columns()});
}

// Each group's weight as [G, OC/G, C/G * prod(kernel)].
at::Tensor groupWeight(const at::Tensor& weight, const ConvShape& s) {
  return weight.reshape({s.groups, s.out_channels / s.groups, s.columns()});
}

c10::DimVector outSizes(const ConvShape& s) {
  c10::DimVector sizes{s.batch, s.out_channels};
  sizes.append(s.out.begin(), s.out.end());
  return sizes;
}

at::Tensor convForward(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, const ConvShape& s) {
  const at::Tensor cols = columns(padInput(input, s), s);
  // [N, G, L, OC/G] -> [N, G, OC/G, L] -> [N, OC, *out]
  at::Tensor out =
      at::matmul(cols, groupWeight(weight, s).transpose(1, 2)).transpose(2, 3).reshape(outSizes(s));
  if (bias.has_value() && bias->defined()) {
    c10::DimVector shape(out.dim(), 1);
    shape[1] = s.out_channels;
    out.add_(bias->reshape(shape));
  }
  return out;
}

// col2im: the gradient of the padded input from the columns' gradient [N, G, L, CK], as one
// scatter-add at each window element's position in the padded plane.
at::Tensor col2im(const at::Tensor& grad_cols, const at::Tensor& input, const ConvShape& s) {
  const int64_t d = s.spatial();
  const auto longs = input.options().dtype(at::kLong);
  // The position of (out position o, kernel offset k) in the padded plane, over [*out, *kernel].
  at::Tensor position = at::zeros({}, longs);
  int64_t step = 1;
  for (int64_t i = d - 1; i >= 0; --i) {
    c10::DimVector o_shape(2 * d, 1), k_shape(2 * d, 1);
    o_shape[i] = s.out[i];
    k_shape[d + i] = s.kernel[i];
    position = position + (at::arange(s.out[i], longs) * (s.stride[i] * step)).view(o_shape) +
               (at::arange(s.kernel[i], longs) * (s.dilation[i] * step)).view(k_shape);
    step *= s.padded[i];
  }
  const int64_t plane = step;
  const int64_t cg = s.channels / s.groups;
  const int64_t window = s.positions() * c10::multiply_integers(s.kernel);
  // [N, G, L, C/G, K] -> [N, G, C/G, L, K] -> [N, C, L * K]
  const at::Tensor src =
      grad_cols.reshape({s.batch, s.groups, s.positions(), cg, c10::multiply_integers(s.kernel)})
          .permute({0, 1, 3, 2, 4})
          .reshape({s.batch, s.channels, window});
  const at::Tensor index = position.reshape({1, 1, window}).expand({s.batch, s.channels, window});
  at::Tensor grad = at::zeros({s.batch, s.channels, plane}, grad_cols.options());
  grad.scatter_add_(2, index, src);
  c10::DimVector padded_sizes{s.batch, s.channels};
  padded_sizes.append(s.padded.begin(), s.padded.end());
  at::Tensor g = grad.view(padded_sizes);
  for (int64_t i = 0; i < d; ++i) g = g.narrow(i + 2, s.padding[i], s.padded[i] - 2 * s.padding[i]);
  return g.contiguous();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convBackward(const at::Tensor& grad_output,
                                                            const at::Tensor& input,
                                                            const at::Tensor& weight,
                                                            const ConvShape& s,
                                                            std::array<bool, 3> mask) {
  const int64_t ocg = s.out_channels / s.groups;
  // [N, G, OC/G, L]
  const at::Tensor go = grad_output.reshape({s.batch, s.groups, ocg, s.positions()});
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[1]) {
    const at::Tensor cols = columns(padInput(input, s), s);
    // sum over n of go[n, g] @ cols[n, g]: [G, OC/G, N*L] @ [G, N*L, CK]
    grad_weight = at::matmul(go.permute({1, 2, 0, 3}).reshape({s.groups, ocg, -1}),
                             cols.transpose(0, 1).reshape({s.groups, -1, s.columns()}))
                      .reshape(weight.sizes());
  }
  if (mask[0]) {
    // [N, G, L, OC/G] @ [G, OC/G, CK] -> [N, G, L, CK]
    const at::Tensor grad_cols = at::matmul(go.transpose(2, 3), groupWeight(weight, s));
    grad_input = col2im(grad_cols, input, s);
  }
  if (mask[2]) {
    c10::DimVector dims{0};
    for (int64_t i = 2; i < grad_output.dim(); ++i) dims.push_back(i);
    grad_bias = grad_output.sum(dims);
  }
  return {grad_input, grad_weight, grad_bias};
}

// The CPU picks channels_last outputs for channels_last inputs or weights, but what PyTorch
// promises for an accel convolution (the Overrideable backend; FakeTensor, and so
// torch.compile, predicts from the same rule) is this format: results are returned in it.
at::Tensor inAccelFormat(const at::Tensor& t, const at::Tensor& input, const at::Tensor& weight) {
  if (!t.defined()) return t;
  auto format = at::native::_determine_backend_memory_format(input, weight,
                                                             at::native::ConvBackend::Overrideable);
  return t.is_contiguous(format) ? t : t.contiguous(format);
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                       c10::IntArrayRef output_padding, int64_t groups) {
  if (nativeConv(input, weight, transposed) &&
      (!bias.has_value() || !bias->defined() || bias->scalar_type() == input.scalar_type())) {
    return inAccelFormat(convForward(input, weight, bias,
                                     ConvShape(input, weight, stride, padding, dilation, groups)),
                         input, weight);
  }
  static auto op = findOp("aten::convolution", "");
  return inAccelFormat(fallbackCall<at::Tensor>(op, input, weight, bias, stride, padding, dilation,
                                                transposed, output_padding, groups),
                       input, weight);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
    c10::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  if (nativeConv(input, weight, transposed) && grad_output.scalar_type() == input.scalar_type()) {
    auto [gi, gw, gb] =
        convBackward(grad_output, input, weight,
                     ConvShape(input, weight, stride, padding, dilation, groups), output_mask);
    return {inAccelFormat(gi, input, weight), inAccelFormat(gw, input, weight), gb};
  }
  static auto op = findOp("aten::convolution_backward", "");
  // The bias gradient has one entry per output channel.
  int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
  std::optional<std::vector<int64_t>> bias_sizes;
  if (output_mask[2]) bias_sizes = std::vector<int64_t>{out_channels};
  torch::jit::Stack stack;
  torch::jit::push(stack, grad_output, input, weight, bias_sizes, stride, padding, dilation,
                   transposed, output_padding, groups, output_mask);
  cpuFallback(op, &stack);
  return {inAccelFormat(stack[0].toTensor(), input, weight),
          inAccelFormat(stack[1].toTensor(), input, weight), stack[2].toTensor()};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

}  // namespace
}  // namespace accel
