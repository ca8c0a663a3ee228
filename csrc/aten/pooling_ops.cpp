// Pooling composed of native accel ops, so it runs on both drivers with no CPU fallback:
// - max_pool2d_with_indices, max_pool3d_with_indices: the input padded with -inf, its windows
//   gathered as a strided view, a max over each window (NaN wins, the first maximum on ties,
//   as on CPU); backward a scatter-add of the gradient at the saved indices.
// - adaptive_max_pool2d: ATen's windows (below) of at most ceil(in / out) + 1 positions per
//   dimension, gathered with the last position repeated to fill the shorter ones (a repeat
//   never wins a tie), then the same max; backward the same scatter-add.
// - avg_pool2d: the zero-padded windows summed, divided by each window's count (ATen's
//   count_include_pad and divisor_override rules); backward adds the scaled gradient into the
//   padded input once per kernel offset.
// - _adaptive_avg_pool2d: separable, so out = M_h x M_w with M the averaging matrices of
//   ATen's windows [floor(o in / out), ceil((o + 1) in / out)); backward M_h^T g M_w^T.
// Shape checks and errors are ATen's own (ATen/native/Pool.h). Float dtypes only (half and
// bfloat16 computed in float); the rest goes through the counted fallback.
#include <ATen/TensorOperators.h>
#include <ATen/native/Pool.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/floor_divide.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <limits>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// The pooling arguments, with PyTorch's defaults and checks, for a 3-D or 4-D input.
struct Pool2d {
  int64_t kH, kW, sH, sW, pH, pW, dH, dW;
  int64_t batch, channels, inH, inW, outH, outW;

  // `op` names the op in the messages, as ATen's checks do ("max_pool2d", "avg_pool2d").
  Pool2d(const char* op, const Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
    TORCH_CHECK(kernel.size() == 1 || kernel.size() == 2, op,
                ": kernel_size must either be a single int, or a tuple of two ints");
    TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2, op,
                ": stride must either be omitted, a single int, or a tuple of two ints");
    TORCH_CHECK(padding.size() == 1 || padding.size() == 2, op,
                ": padding must either be a single int, or a tuple of two ints");
    TORCH_CHECK(dilation.size() == 1 || dilation.size() == 2, op,
                ": dilation must be either a single int, or a tuple of two ints");
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

  static constexpr int kDims = 2;
  static constexpr const char* kMaxName = "max_pool2d";

  c10::DimVector outShape(const Tensor& input) const {
    c10::DimVector s(input.sizes().begin(), input.sizes().end() - 2);
    s.push_back(outH);
    s.push_back(outW);
    return s;
  }

  // The max of each window and its index in the input's plane (windowMax below).
  std::tuple<Tensor, Tensor> maxOverWindows(const Tensor& input) const;

  // The padding past the input's bottom and right edges that the last window (ceil_mode)
  // reaches, beyond the symmetric pH, pW.
  int64_t rightH() const {
    return std::max<int64_t>(0, (outH - 1) * sH + dH * (kH - 1) + 1 - inH - pH);
  }
  int64_t rightW() const {
    return std::max<int64_t>(0, (outW - 1) * sW + dW * (kW - 1) + 1 - inW - pW);
  }
};

// The max of every pooling window of x [B, C, *in] (N spatial dimensions), and its position
// as an index into x's flattened spatial plane: [B, C, *out] each.
std::tuple<Tensor, Tensor> windowMax(const Tensor& x, at::IntArrayRef in, at::IntArrayRef out,
                                     at::IntArrayRef kernel, at::IntArrayRef stride,
                                     at::IntArrayRef pad, at::IntArrayRef dilation) {
  const size_t n = in.size();
  // Padded so that every window lies inside: left pad[i], right what the last window reaches.
  c10::DimVector pads;
  for (size_t i = n; i-- > 0;) {
    pads.push_back(pad[i]);
    pads.push_back(std::max<int64_t>(
        0, (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - in[i] - pad[i]));
  }
  const Tensor padded =
      at::constant_pad_nd(x, pads, -std::numeric_limits<double>::infinity()).contiguous();
  c10::DimVector sizes{x.size(0), x.size(1)}, strides{padded.stride(0), padded.stride(1)};
  for (size_t i = 0; i < n; ++i) {
    sizes.push_back(out[i]);
    strides.push_back(stride[i] * padded.stride(2 + i));
  }
  int64_t window = 1;
  for (size_t i = 0; i < n; ++i) {
    sizes.push_back(kernel[i]);
    strides.push_back(dilation[i] * padded.stride(2 + i));
    window *= kernel[i];
  }
  c10::DimVector flat(sizes.begin(), sizes.begin() + 2 + n);
  flat.push_back(window);
  auto [values, k] = padded.as_strided(sizes, strides).reshape(flat).max(-1);
  // The window position k as an index into the unpadded input's plane, dimension by dimension
  // from the last. A window whose input elements are all -inf may pick a padded position:
  // clamped into the input, it names the window's first input element, as CPU does.
  Tensor index = at::zeros({}, k.options());
  int64_t plane = 1;
  for (size_t i = n; i-- > 0;) {
    c10::DimVector shape(n, 1);
    shape[i] = out[i];
    const Tensor start = (at::arange(out[i], k.options()) * stride[i] - pad[i]).view(shape);
    const Tensor ki = at::remainder(k, kernel[i]);
    k = at::floor_divide(k, kernel[i]);
    index = index + (start + ki * dilation[i]).clamp(0, in[i] - 1) * plane;
    plane *= in[i];
  }
  return {values, index};
}

// The gradient of a max pooling: grad_output added at the saved indices of self's planes.
Tensor maxPoolBackward(const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                       int64_t spatial_dims, const Output& out) {
  const int64_t channels = self.size(-spatial_dims - 1);
  int64_t plane = 1;
  for (int64_t i = 1; i <= spatial_dims; ++i) plane *= self.size(-i);
  const int64_t batch = self.numel() / std::max<int64_t>(1, channels * plane);
  const Tensor grad = at::zeros({batch, channels, plane}, grad_output.options());
  grad.scatter_add_(2, indices.reshape({batch, channels, -1}),
                    grad_output.reshape({batch, channels, -1}));
  Tensor result = out.allocate(self.sizes(), grad_output.options());
  result.copy_(grad.view(self.sizes()));
  return out.finish(result);
}

bool nativeMaxPoolBackward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  return floatingKernelType(grad_output) && grad_output.scalar_type() == self.scalar_type() &&
         indices.scalar_type() == at::kLong;
}

// Writes a max pooling's values and indices into its outputs of `shape`.
std::tuple<Tensor, Tensor> maxPoolResults(const Tensor& self, at::IntArrayRef shape,
                                          const Tensor& values, const Tensor& index,
                                          const Output& out, const Output& indices_out) {
  Tensor result = out.allocate(shape, self.options());
  Tensor result_indices = indices_out.allocate(shape, index.options(), Output::DTypeRule::Exact);
  result.copy_(values.reshape(shape));
  result_indices.copy_(index.reshape(shape));
  return {out.finish(result), indices_out.finish(result_indices)};
}

// --- max_pool2d_with_indices, max_pool3d_with_indices -----------------------------------------

// The 3-D pooling arguments, with PyTorch's defaults and checks, for a 4-D or 5-D input.
struct Pool3d {
  int64_t k[3], s[3], pad[3], dil[3], in[3], out[3];
  int64_t batch, channels;

  static constexpr int kDims = 3;
  static constexpr const char* kMaxName = "max_pool3d_with_indices()";

  Pool3d(const char* op, const Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
    TORCH_CHECK(kernel.size() == 1 || kernel.size() == 3,
                "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
    TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
                "max_pool3d: stride must either be omitted, a single int, or a tuple of three "
                "ints");
    TORCH_CHECK(padding.size() == 1 || padding.size() == 3,
                "max_pool3d: padding must either be a single int, or a tuple of three ints");
    TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3,
                "max_pool3d: dilation must be either a single int, or a tuple of three ints");
    TORCH_CHECK(input.dim() == 4 || input.dim() == 5,
                "non-empty 4D or 5D (batch mode) tensor expected for input");
    auto pick = [](at::IntArrayRef v, int i) { return v.size() == 1 ? v[0] : v[i]; };
    for (int i = 0; i < 3; ++i) {
      k[i] = pick(kernel, i);
      s[i] = stride.empty() ? k[i] : pick(stride, i);
      pad[i] = pick(padding, i);
      dil[i] = pick(dilation, i);
      in[i] = input.size(-3 + i);
      out[i] =
          at::native::pooling_output_shape<int64_t>(in[i], k[i], pad[i], s[i], dil[i], ceil_mode);
    }
    batch = input.dim() == 5 ? input.size(0) : 1;
    channels = input.size(-4);
    at::native::pool3d_shape_check(input, channels, k[0], k[1], k[2], s[0], s[1], s[2], pad[0],
                                   pad[1], pad[2], dil[0], dil[1], dil[2], in[0], in[1], in[2],
                                   out[0], out[1], out[2], op);
  }

  c10::DimVector outShape(const Tensor& input) const {
    c10::DimVector shape(input.sizes().begin(), input.sizes().end() - 3);
    shape.insert(shape.end(), out, out + 3);
    return shape;
  }

  std::tuple<Tensor, Tensor> maxOverWindows(const Tensor& input) const {
    return windowMax(input.reshape({batch, channels, in[0], in[1], in[2]}), in, out, k, s, pad,
                     dil);
  }
};

std::tuple<Tensor, Tensor> Pool2d::maxOverWindows(const Tensor& input) const {
  return windowMax(input.reshape({batch, channels, inH, inW}), {inH, inW}, {outH, outW}, {kH, kW},
                   {sH, sW}, {pH, pW}, {dH, dW});
}

// max_pool2d_with_indices and max_pool3d_with_indices (Pool2d, Pool3d) and their backward.
template <class Pool>
struct MaxPoolWithIndices {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef,
                     at::IntArrayRef, bool) {
    return floatingKernelType(self);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, at::IntArrayRef kernel_size,
                                            at::IntArrayRef stride, at::IntArrayRef padding,
                                            at::IntArrayRef dilation, bool ceil_mode,
                                            const Output& out, const Output& indices_out) {
    const Pool p(Pool::kMaxName, self, kernel_size, stride, padding, dilation, ceil_mode);
    auto [values, index] = p.maxOverWindows(self);
    return maxPoolResults(self, p.outShape(self), values, index, out, indices_out);
  }
};

template <class Pool>
struct MaxPoolWithIndicesBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, at::IntArrayRef,
                     at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool,
                     const Tensor& indices) {
    return nativeMaxPoolBackward(grad_output, self, indices);
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, at::IntArrayRef kernel_size,
                        at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                        bool ceil_mode, const Tensor& indices, const Output& out) {
    const Pool p(Pool::kMaxName, self, kernel_size, stride, padding, dilation, ceil_mode);
    const auto shape = p.outShape(self);
    TORCH_CHECK(
        grad_output.sizes() == at::IntArrayRef(shape) && indices.sizes() == at::IntArrayRef(shape),
        Pool::kMaxName, " backward: expected grad_output and indices of size ",
        at::IntArrayRef(shape), ", got ", grad_output.sizes(), " and ", indices.sizes());
    return maxPoolBackward(grad_output, self, indices, Pool::kDims, out);
  }
};

// --- avg_pool2d ------------------------------------------------------------------------

// Each window's divisor along one dimension: the window clipped to the padded input
// (count_include_pad) or to the input itself, as ATen counts them.
Tensor windowCounts(int64_t out, int64_t k, int64_t s, int64_t pad, int64_t in, bool include_pad,
                    const at::TensorOptions& longs) {
  const Tensor start = at::arange(out, longs) * s - pad;
  const Tensor end = (start + k).clamp_max(in + pad);
  return include_pad ? end - start : end.clamp_max(in) - start.clamp_min(0);
}

// The [outH, outW] divisors of avg_pool2d, in the opmath dtype `type`.
Tensor avgDivisors(const Pool2d& p, bool count_include_pad, std::optional<int64_t> divisor_override,
                   const Tensor& like, at::ScalarType type) {
  const auto longs = like.options().dtype(at::kLong);
  if (divisor_override)
    return at::full({1, 1}, static_cast<double>(*divisor_override), like.options().dtype(type));
  const Tensor h = windowCounts(p.outH, p.kH, p.sH, p.pH, p.inH, count_include_pad, longs);
  const Tensor w = windowCounts(p.outW, p.kW, p.sW, p.pW, p.inW, count_include_pad, longs);
  return (h.view({p.outH, 1}) * w.view({1, p.outW})).to(type);
}

Pool2d avgPool(const char* op, const Tensor& self, at::IntArrayRef kernel_size,
               at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
               std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  return Pool2d(op, self, kernel_size, stride, padding, {1}, ceil_mode);
}

struct AvgPool2d {
  static bool native(const Tensor& self, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool,
                     bool, std::optional<int64_t>) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                        at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                        std::optional<int64_t> divisor_override, const Output& out) {
    const Pool2d p =
        avgPool("avg_pool2d", self, kernel_size, stride, padding, ceil_mode, divisor_override);
    const auto type = at::toOpMathType(self.scalar_type());
    const Tensor x = self.reshape({p.batch, p.channels, p.inH, p.inW});
    const Tensor padded =
        at::constant_pad_nd(x, {p.pW, p.rightW(), p.pH, p.rightH()}, 0).contiguous();
    const int64_t W = padded.size(3), H = padded.size(2);
    const Tensor sums = padded
                            .as_strided({p.batch, p.channels, p.outH, p.outW, p.kH, p.kW},
                                        {p.channels * H * W, H * W, p.sH * W, p.sW, W, 1})
                            .sum({4, 5}, false, type);
    const Tensor avg = sums / avgDivisors(p, count_include_pad, divisor_override, self, type);
    Tensor result = out.allocate(p.outShape(self), self.options());
    result.copy_(avg.view(p.outShape(self)));
    return out.finish(result);
  }
};

struct AvgPool2dBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, at::IntArrayRef,
                     at::IntArrayRef, at::IntArrayRef, bool, bool, std::optional<int64_t>) {
    return floatingKernelType(grad_output) && grad_output.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, at::IntArrayRef kernel_size,
                        at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                        bool count_include_pad, std::optional<int64_t> divisor_override,
                        const Output& out) {
    const Pool2d p = avgPool("avg_pool2d_backward", self, kernel_size, stride, padding, ceil_mode,
                             divisor_override);
    const auto shape = p.outShape(self);
    TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(shape),
                "avg_pool2d_backward: expected grad_output of size ", at::IntArrayRef(shape),
                ", got ", grad_output.sizes());
    const auto type = at::toOpMathType(self.scalar_type());
    const Tensor g = grad_output.reshape({p.batch, p.channels, p.outH, p.outW}).to(type) /
                     avgDivisors(p, count_include_pad, divisor_override, self, type);
    const int64_t H = p.pH + p.inH + p.rightH(), W = p.pW + p.inW + p.rightW();
    const Tensor grad = at::zeros({p.batch, p.channels, H, W}, self.options().dtype(type));
    // One add per kernel offset: within one offset the windows' elements are distinct.
    for (int64_t kh = 0; kh < p.kH; ++kh)
      for (int64_t kw = 0; kw < p.kW; ++kw)
        grad.as_strided({p.batch, p.channels, p.outH, p.outW},
                        {p.channels * H * W, H * W, p.sH * W, p.sW}, kh * W + kw)
            .add_(g);
    Tensor result = out.allocate(self.sizes(), grad_output.options());
    result.copy_(
        grad.slice(2, p.pH, p.pH + p.inH).slice(3, p.pW, p.pW + p.inW).reshape(self.sizes()));
    return out.finish(result);
  }
};

// --- _adaptive_avg_pool2d ------------------------------------------------------------------

// [in, out] matrix whose column o averages ATen's window o of the input's `in` positions.
Tensor adaptiveMatrix(int64_t in, int64_t out, const Tensor& like, at::ScalarType type) {
  const auto longs = like.options().dtype(at::kLong);
  const Tensor o = at::arange(out, longs);
  const Tensor start = at::floor_divide(o * in, out).view({1, out});
  const Tensor end = at::floor_divide((o + 1) * in + out - 1, out).view({1, out});
  const Tensor i = at::arange(in, longs).view({in, 1});
  return ((i >= start) & (i < end)).to(type) / (end - start).to(type);
}

void checkAdaptiveInput(const Tensor& input) {
  const int64_t ndim = input.dim();
  TORCH_CHECK(ndim == 3 || ndim == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ",
              input.sizes());
  for (const int64_t i : {-2, -1})
    TORCH_CHECK(input.size(i) > 0,
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ",
                input.sizes(), " with dimension ", i + ndim, " being empty");
}

struct AdaptiveAvgPool2d {
  static bool native(const Tensor& self, at::IntArrayRef) { return floatingKernelType(self); }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size) {
    TORCH_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
    checkAdaptiveInput(self);
    const int64_t outH = output_size[0], outW = output_size[1];
    TORCH_CHECK(outH >= 0 && outW >= 0,
                "adaptive_avg_pool2d: elements of output_size must be "
                "greater than or equal to 0 but received {",
                outH, ", ", outW, "}");
    const auto type = at::toOpMathType(self.scalar_type());
    const int64_t H = self.size(-2), W = self.size(-1);
    const Tensor x = self.reshape({-1, H, W}).to(type);
    const Tensor y = adaptiveMatrix(H, outH, self, type)
                         .t()
                         .matmul(x)
                         .matmul(adaptiveMatrix(W, outW, self, type));
    c10::DimVector shape(self.sizes().begin(), self.sizes().end() - 2);
    shape.push_back(outH);
    shape.push_back(outW);
    return y.reshape(shape).to(self.scalar_type());
  }
};

struct AdaptiveAvgPool2dBackward {
  static bool native(const Tensor& grad_output, const Tensor& self) {
    return floatingKernelType(grad_output) && grad_output.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self) {
    checkAdaptiveInput(self);
    TORCH_CHECK(grad_output.dim() == self.dim(),
                "adaptive_avg_pool2d_backward: expected grad_output of ", self.dim(),
                " dimensions, got ", grad_output.sizes());
    const auto type = at::toOpMathType(self.scalar_type());
    const int64_t H = self.size(-2), W = self.size(-1);
    const int64_t outH = grad_output.size(-2), outW = grad_output.size(-1);
    const Tensor g = grad_output.reshape({-1, outH, outW}).to(type);
    const Tensor gx = adaptiveMatrix(H, outH, self, type)
                          .matmul(g)
                          .matmul(adaptiveMatrix(W, outW, self, type).t());
    return gx.reshape(self.sizes()).to(self.scalar_type());
  }
};

// --- adaptive_max_pool2d ---------------------------------------------------------------------

// [out, width] input positions of ATen's adaptive windows along one dimension, each window
// [floor(o in / out), ceil((o + 1) in / out)) filled up to `width` with its last position.
Tensor adaptiveWindows(int64_t in, int64_t out, int64_t width, const at::TensorOptions& longs) {
  const Tensor o = at::arange(out, longs).view({out, 1});
  const Tensor start = at::floor_divide(o * in, out);
  const Tensor end = at::floor_divide((o + 1) * in + out - 1, out);
  return at::minimum(start + at::arange(width, longs), end - 1);
}

struct AdaptiveMaxPool2d {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, at::IntArrayRef) { return floatingKernelType(self); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, at::IntArrayRef output_size,
                                            const Output& out, const Output& indices_out) {
    TORCH_CHECK(output_size.size() == 2,
                "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
    const int64_t ndim = self.dim();
    TORCH_CHECK(ndim == 3 || ndim == 4,
                "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: ", self.sizes());
    for (int64_t i = 1; i < ndim; ++i)
      TORCH_CHECK(self.size(i) > 0,
                  "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                  "dimensions, but input has sizes ",
                  self.sizes(), " with dimension ", i, " being empty");
    const int64_t H = self.size(-2), W = self.size(-1);
    const int64_t outH = output_size[0], outW = output_size[1];
    c10::DimVector shape(self.sizes().begin(), self.sizes().end() - 2);
    shape.push_back(outH);
    shape.push_back(outW);
    const auto longs = self.options().dtype(at::kLong);
    // A negative size fails here with CPU's error (creating a tensor of negative dimension).
    if (outH <= 0 || outW <= 0 || self.numel() == 0) {
      return maxPoolResults(self, shape, at::empty(shape, self.options()), at::empty(shape, longs),
                            out, indices_out);
    }
    const int64_t kH = (H + outH - 1) / outH + 1, kW = (W + outW - 1) / outW + 1;
    const Tensor rows = adaptiveWindows(H, outH, kH, longs);  // [outH, kH]
    const Tensor cols = adaptiveWindows(W, outW, kW, longs);  // [outW, kW]
    // [n, outH, outW, kH * kW] window elements, by their index into the H * W plane.
    const Tensor plane = (rows.view({outH, 1, kH, 1}) * W + cols.view({1, outW, 1, kW}))
                             .reshape({outH, outW, kH * kW});
    const Tensor x = self.reshape({-1, H * W});
    auto [values, k] =
        x.index_select(1, plane.reshape({-1})).view({-1, outH, outW, kH * kW}).max(-1);
    const Tensor index =
        plane.reshape({outH * outW, kH * kW}).gather(1, k.reshape({-1, outH * outW}).t()).t();
    return maxPoolResults(self, shape, values, index, out, indices_out);
  }
};

struct AdaptiveMaxPool2dBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
    return nativeMaxPoolBackward(grad_output, self, indices);
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                        const Output& out) {
    TORCH_CHECK(self.dim() == 3 || self.dim() == 4,
                "adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but got: ",
                grad_output.sizes());
    TORCH_CHECK(grad_output.sizes() == indices.sizes(),
                "adaptive_max_pool2d_backward: expected grad_output and indices of one size, got ",
                grad_output.sizes(), " and ", indices.sizes());
    return maxPoolBackward(grad_output, self, indices, 2, out);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<AvgPool2d>(m, "avg_pool2d", nullptr, "avg_pool2d.out");
  registerForms<AvgPool2dBackward>(m, "avg_pool2d_backward", nullptr,
                                   "avg_pool2d_backward.grad_input");
  registerNative<AdaptiveAvgPool2d>(m, "_adaptive_avg_pool2d");
  registerNative<AdaptiveAvgPool2dBackward>(m, "_adaptive_avg_pool2d_backward");
  registerForms<MaxPoolWithIndices<Pool2d>>(m, "max_pool2d_with_indices", nullptr,
                                            "max_pool2d_with_indices.out");
  registerForms<MaxPoolWithIndicesBackward<Pool2d>>(m, "max_pool2d_with_indices_backward", nullptr,
                                                    "max_pool2d_with_indices_backward.grad_input");
  registerForms<MaxPoolWithIndices<Pool3d>>(m, "max_pool3d_with_indices", nullptr,
                                            "max_pool3d_with_indices.out");
  registerForms<MaxPoolWithIndicesBackward<Pool3d>>(m, "max_pool3d_with_indices_backward", nullptr,
                                                    "max_pool3d_with_indices_backward.grad_input");
  registerForms<AdaptiveMaxPool2d>(m, "adaptive_max_pool2d", nullptr, "adaptive_max_pool2d.out");
  registerForms<AdaptiveMaxPool2dBackward>(m, "adaptive_max_pool2d_backward", nullptr,
                                           "adaptive_max_pool2d_backward.grad_input");
}

}  // namespace
}  // namespace accel
