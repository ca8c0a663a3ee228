// Pooling composed of native accel ops, so it runs on both drivers with no CPU fallback:
// - max_pool2d_with_indices, max_pool3d_with_indices: the pooling kernels (kernels/pool.h),
//   each window's max and position read in place in CPU's order; backward each input element
//   gathering the gradients of the windows that picked it.
// - adaptive_max_pool2d: ATen's windows (below) of at most ceil(in / out) + 1 positions per
//   dimension, gathered with the last position repeated to fill the shorter ones (a repeat
//   never wins a tie), then a max; backward a scatter-add of the gradient at the indices.
// - avg_pool2d: the zero-padded windows summed, divided by each window's count (ATen's
//   count_include_pad and divisor_override rules); backward adds the scaled gradient into the
//   padded input once per kernel offset.
// - avg_pool3d: the same over three dimensions (one Window geometry serves 2-D and 3-D).
// - _adaptive_avg_pool2d and 3d: separable, so out = x times M along each spatial dimension,
//   M the averaging matrices of ATen's windows [floor(o in / out), ceil((o + 1) in / out));
//   backward the same with each M transposed.
// - max_unpool2d, max_unpool3d: zeros with the values scattered to their indices in each
//   plane (indices checked first, with CPU's message); backward (autograd's) a gather.
// Shape checks and errors are ATen's own (ATen/native/Pool.h). Float dtypes only (half and
// bfloat16 computed in float); the rest goes through the counted fallback.
#include <ATen/TensorOperators.h>
#include <ATen/native/Pool.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta_dispatch.h>
#include <ATen/ops/adaptive_max_pool2d_meta_dispatch.h>
#include <ATen/ops/adaptive_max_pool3d_backward_meta_dispatch.h>
#include <ATen/ops/adaptive_max_pool3d_meta_dispatch.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/floor_divide.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/index_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/pool.h"

namespace accel {
namespace {

using at::Tensor;

// One pooling's geometry over its n (2 or 3) spatial dimensions.
struct Window {
  int n = 0;
  int64_t k[3], s[3], pad[3], dil[3], in[3], out[3];
  // The padding past the end of dimension i that the last window (ceil_mode) reaches, beyond
  // the symmetric pad[i].
  int64_t right(int i) const {
    return std::max<int64_t>(0, (out[i] - 1) * s[i] + dil[i] * (k[i] - 1) + 1 - in[i] - pad[i]);
  }
};

// x [B, C, *in] padded with `value` so that every window of w lies inside.
Tensor paddedFor(const Tensor& x, const Window& w, double value) {
  c10::DimVector pads;
  for (int i = w.n; i-- > 0;) {
    pads.push_back(w.pad[i]);
    pads.push_back(w.right(i));
  }
  return at::constant_pad_nd(x, pads, value).contiguous();
}

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

  Window window() const {
    Window w;
    w.n = 2;
    const int64_t v[6][2] = {{kH, kW}, {sH, sW}, {pH, pW}, {dH, dW}, {inH, inW}, {outH, outW}};
    int64_t* fields[6] = {w.k, w.s, w.pad, w.dil, w.in, w.out};
    for (int f = 0; f < 6; ++f) std::copy(v[f], v[f] + 2, fields[f]);
    return w;
  }
  // The input as [B, C, H, W].
  Tensor planes(const Tensor& input) const { return input.reshape({batch, channels, inH, inW}); }
};

// The pooling kernels' view of x [B, C, *in] (w.n spatial dimensions, the leading ones of
// the kernel's three left at size 1).
kernels::PoolDesc poolDesc(const Tensor& x, const Window& w) {
  kernels::PoolDesc d;
  d.dtype = toKernelDType(x.scalar_type());
  d.planes = x.size(0) * x.size(1);
  for (int i = 0; i < w.n; ++i) {
    const int j = 3 - w.n + i;
    d.in[j] = w.in[i];
    d.out[j] = w.out[i];
    d.k[j] = w.k[i];
    d.s[j] = w.s[i];
    d.pad[j] = w.pad[i];
    d.dil[j] = w.dil[i];
  }
  return d;
}

// The max of every pooling window of x [B, C, *in], and its position as an index into x's
// flattened spatial plane: [B, C, *out] each (kernels/pool.h).
std::tuple<Tensor, Tensor> windowMax(const Tensor& x_, const Window& w) {
  const Tensor x = x_.contiguous();
  c10::DimVector shape{x.size(0), x.size(1)};
  shape.append(w.out, w.out + w.n);
  Tensor values = at::empty(shape, x.options());
  Tensor index = at::empty(shape, x.options().dtype(at::kLong));
  if (values.numel() == 0) return {values, index};
  kernels::PoolDesc d = poolDesc(x, w);
  d.x = static_cast<const char*>(x.const_data_ptr());
  d.y = static_cast<char*>(values.data_ptr());
  d.indices = index.data_ptr<int64_t>();
  const int device = x.device().index();
  ACCEL_RT_CHECK(kernels::poolTable().max_pool(d, currentRuntimeStream(device)), device);
  return {values, index};
}

// Its gradient: each input element gathers the gradients of the windows that picked it, in
// the windows' order (CPU's scatter order), so the sums are CPU's.
Tensor windowMaxBackward(const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                         const Window& w, at::IntArrayRef planes_shape, const Output& out) {
  const Tensor dy = grad_output.contiguous(), picked = indices.contiguous();
  Tensor dx = at::empty(planes_shape, grad_output.options());
  if (dx.numel() > 0) {
    kernels::PoolDesc d = poolDesc(dx, w);
    d.dy = static_cast<const char*>(dy.const_data_ptr());
    d.indices = const_cast<int64_t*>(picked.const_data_ptr<int64_t>());
    d.dx = static_cast<char*>(dx.data_ptr());
    const int device = self.device().index();
    ACCEL_RT_CHECK(kernels::poolTable().max_pool_backward(d, currentRuntimeStream(device)), device);
  }
  Tensor result = out.allocate(self.sizes(), grad_output.options());
  result.copy_(dx.view(self.sizes()));
  return out.finish(result);
}

// The gradient of an adaptive max pooling: grad_output added at the saved indices of self's
// planes.
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
// `name` starts the argument messages (max_pool3d, avg_pool3d); `op` names the shape check's.
struct Pool3d {
  Window w;
  int64_t batch, channels;

  static constexpr int kDims = 3;
  static constexpr const char* kMaxName = "max_pool3d_with_indices()";

  Pool3d(const char* op, const Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
         at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
         const char* name = "max_pool3d", bool check_input_size = false) {
    TORCH_CHECK(kernel.size() == 1 || kernel.size() == 3, name,
                ": kernel_size must either be a single int, or a tuple of three ints");
    TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3, name,
                ": stride must either be omitted, a single int, or a tuple of three ints");
    TORCH_CHECK(padding.size() == 1 || padding.size() == 3, name,
                ": padding must either be a single int, or a tuple of three ints");
    TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3, name,
                ": dilation must be either a single int, or a tuple of three ints");
    TORCH_CHECK(input.dim() == 4 || input.dim() == 5,
                "non-empty 4D or 5D (batch mode) tensor expected for input");
    auto pick = [](at::IntArrayRef v, int i) { return v.size() == 1 ? v[0] : v[i]; };
    w.n = 3;
    for (int i = 0; i < 3; ++i) {
      w.k[i] = pick(kernel, i);
      w.s[i] = stride.empty() ? w.k[i] : pick(stride, i);
      w.pad[i] = pick(padding, i);
      w.dil[i] = pick(dilation, i);
      w.in[i] = input.size(-3 + i);
      w.out[i] = at::native::pooling_output_shape<int64_t>(w.in[i], w.k[i], w.pad[i], w.s[i],
                                                           w.dil[i], ceil_mode);
    }
    batch = input.dim() == 5 ? input.size(0) : 1;
    channels = input.size(-4);
    at::native::pool3d_shape_check(input, channels, w.k[0], w.k[1], w.k[2], w.s[0], w.s[1], w.s[2],
                                   w.pad[0], w.pad[1], w.pad[2], w.dil[0], w.dil[1], w.dil[2],
                                   w.in[0], w.in[1], w.in[2], w.out[0], w.out[1], w.out[2], op,
                                   check_input_size);
  }

  c10::DimVector outShape(const Tensor& input) const {
    c10::DimVector shape(input.sizes().begin(), input.sizes().end() - 3);
    shape.insert(shape.end(), w.out, w.out + 3);
    return shape;
  }
  const Window& window() const { return w; }
  Tensor planes(const Tensor& input) const {
    return input.reshape({batch, channels, w.in[0], w.in[1], w.in[2]});
  }
};

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
    auto [values, index] = windowMax(p.planes(self), p.window());
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
    const Tensor planes = p.planes(self);
    return windowMaxBackward(grad_output, self, indices, p.window(), planes.sizes(), out);
  }
};

// --- avg_pool2d, avg_pool3d -------------------------------------------------------------

// Each window's divisor along one dimension: the window clipped to the padded input
// (count_include_pad) or to the input itself, as ATen counts them.
Tensor windowCounts(int64_t out, int64_t k, int64_t s, int64_t pad, int64_t in, bool include_pad,
                    const at::TensorOptions& longs) {
  const Tensor start = at::arange(out, longs) * s - pad;
  const Tensor end = (start + k).clamp_max(in + pad);
  return include_pad ? end - start : end.clamp_max(in) - start.clamp_min(0);
}

// The [*out] divisors of an average pooling, in the opmath dtype `type`.
Tensor avgDivisors(const Window& w, bool count_include_pad, std::optional<int64_t> divisor_override,
                   const Tensor& like, at::ScalarType type) {
  const auto longs = like.options().dtype(at::kLong);
  if (divisor_override)
    return at::full({1}, static_cast<double>(*divisor_override), like.options().dtype(type));
  Tensor d = at::ones({}, longs);
  for (int i = 0; i < w.n; ++i) {
    c10::DimVector shape(w.n, 1);
    shape[i] = w.out[i];
    d = d * windowCounts(w.out[i], w.k[i], w.s[i], w.pad[i], w.in[i], count_include_pad, longs)
                .view(shape);
  }
  return d.to(type);
}

// Pool2d / Pool3d for avg_pool2d / avg_pool3d (and their backward, `backward`).
Pool2d avgPool(const Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
               at::IntArrayRef padding, bool ceil_mode, std::optional<int64_t> divisor_override,
               bool backward, const Pool2d*) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  return Pool2d(backward ? "avg_pool2d_backward" : "avg_pool2d", self, kernel_size, stride, padding,
                {1}, ceil_mode);
}

Pool3d avgPool(const Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
               at::IntArrayRef padding, bool ceil_mode, std::optional<int64_t> divisor_override,
               bool backward, const Pool3d*) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  return Pool3d(backward ? "avg_pool3d_backward()" : "avg_pool3d()", self, kernel_size, stride,
                padding, {1}, ceil_mode, "avg_pool3d", /*check_input_size=*/true);
}

// The windows of the zero-padded input (the view [B, C, *out, *k] of `padded`), or, with
// `offset`, the [B, C, *out] elements at one kernel offset of every window.
Tensor windowsOf(const Tensor& padded, const Window& w, const int64_t* offset = nullptr) {
  c10::DimVector sizes{padded.size(0), padded.size(1)}, strides{padded.stride(0), padded.stride(1)};
  int64_t start = 0;
  for (int i = 0; i < w.n; ++i) {
    sizes.push_back(w.out[i]);
    strides.push_back(w.s[i] * padded.stride(2 + i));
    if (offset) start += offset[i] * padded.stride(2 + i);
  }
  if (!offset) {
    for (int i = 0; i < w.n; ++i) {
      sizes.push_back(w.k[i]);
      strides.push_back(padded.stride(2 + i));
    }
  }
  return padded.as_strided(sizes, strides, padded.storage_offset() + start);
}

// Windows that reach far past the input (a kernel larger than it, with ceil_mode or padding:
// EfficientNet's head pools a 1 x 1 map with a 1280-wide kernel) would pad each plane to many
// times its size, and the backward would loop over every kernel offset. Their sums are
// separable instead: along each dimension, a product with that dimension's [out, in] 0/1
// matrix of which inputs each window covers.
bool farReaching(const Window& w) {
  int64_t padded = 1, input = 1;
  for (int i = 0; i < w.n; ++i) {
    padded *= w.pad[i] + w.in[i] + w.right(i);
    input *= w.in[i];
  }
  return padded > 4 * input;
}

// [out, in]: 1 where input j lies in output o's window along dimension i.
Tensor windowMatrix(const Window& w, int i, const at::TensorOptions& options) {
  const auto longs = options.dtype(at::kLong);
  const Tensor start = (at::arange(w.out[i], longs) * w.s[i] - w.pad[i]).unsqueeze(1);
  const Tensor j = at::arange(w.in[i], longs).unsqueeze(0);
  return ((j >= start) & (j < start + w.k[i])).to(options.dtype());
}

// x [B, C, *in] (or [B, C, *out] with `transpose`: the gradient's way back) through every
// dimension's window matrix.
Tensor throughWindows(Tensor x, const Window& w, bool transpose) {
  for (int i = 0; i < w.n; ++i) {
    const Tensor m = windowMatrix(w, i, x.options());
    x = at::matmul(x.movedim(2 + i, -1), transpose ? m : m.t()).movedim(-1, 2 + i);
  }
  return x;
}

template <class Pool>
struct AvgPool {
  static bool native(const Tensor& self, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool,
                     bool, std::optional<int64_t>) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                        at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                        std::optional<int64_t> divisor_override, const Output& out) {
    const Pool p = avgPool(self, kernel_size, stride, padding, ceil_mode, divisor_override, false,
                           static_cast<const Pool*>(nullptr));
    const Window& w = p.window();
    const auto type = at::toOpMathType(self.scalar_type());
    c10::DimVector window_dims;
    for (int i = 0; i < w.n; ++i) window_dims.push_back(2 + w.n + i);
    const Tensor sums =
        farReaching(w)
            ? throughWindows(p.planes(self).to(type), w, false)
            : windowsOf(paddedFor(p.planes(self), w, 0), w).sum(window_dims, false, type);
    const Tensor avg = sums / avgDivisors(w, count_include_pad, divisor_override, self, type);
    Tensor result = out.allocate(p.outShape(self), self.options());
    result.copy_(avg.view(p.outShape(self)));
    return out.finish(result);
  }
};

template <class Pool>
struct AvgPoolBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, at::IntArrayRef,
                     at::IntArrayRef, at::IntArrayRef, bool, bool, std::optional<int64_t>) {
    return floatingKernelType(grad_output) && grad_output.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, at::IntArrayRef kernel_size,
                        at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                        bool count_include_pad, std::optional<int64_t> divisor_override,
                        const Output& out) {
    const Pool p = avgPool(self, kernel_size, stride, padding, ceil_mode, divisor_override, true,
                           static_cast<const Pool*>(nullptr));
    const Window& w = p.window();
    const auto shape = p.outShape(self);
    TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(shape),
                Pool::kDims == 2 ? "avg_pool2d" : "avg_pool3d",
                "_backward: expected grad_output of size ", at::IntArrayRef(shape), ", got ",
                grad_output.sizes());
    const auto type = at::toOpMathType(self.scalar_type());
    c10::DimVector planes{p.batch, p.channels}, padded{p.batch, p.channels};
    for (int i = 0; i < w.n; ++i) {
      planes.push_back(w.out[i]);
      padded.push_back(w.pad[i] + w.in[i] + w.right(i));
    }
    const Tensor g = grad_output.reshape(planes).to(type) /
                     avgDivisors(w, count_include_pad, divisor_override, self, type);
    if (farReaching(w)) {
      const Tensor grad = throughWindows(g, w, true).reshape(self.sizes());
      return into(out, grad.to(grad_output.scalar_type()));
    }
    Tensor grad = at::zeros(padded, self.options().dtype(type));
    // One add per kernel offset: within one offset the windows' elements are distinct.
    int64_t offsets = 1;
    for (int i = 0; i < w.n; ++i) offsets *= w.k[i];
    for (int64_t o = 0; o < offsets; ++o) {
      int64_t offset[3], rest = o;
      for (int i = w.n; i-- > 0;) {
        offset[i] = rest % w.k[i];
        rest /= w.k[i];
      }
      windowsOf(grad, w, offset).add_(g);
    }
    for (int i = 0; i < w.n; ++i) grad = grad.narrow(2 + i, w.pad[i], w.in[i]);
    Tensor result = out.allocate(self.sizes(), grad_output.options());
    result.copy_(grad.reshape(self.sizes()));
    return out.finish(result);
  }
};

// --- _adaptive_avg_pool2d, _adaptive_avg_pool3d ----------------------------------------------

// [in, out] matrix whose column o averages ATen's window o of the input's `in` positions.
Tensor adaptiveMatrix(int64_t in, int64_t out, const Tensor& like, at::ScalarType type) {
  const auto longs = like.options().dtype(at::kLong);
  const Tensor o = at::arange(out, longs);
  const Tensor start = at::floor_divide(o * in, out).view({1, out});
  const Tensor end = at::floor_divide((o + 1) * in + out - 1, out).view({1, out});
  const Tensor i = at::arange(in, longs).view({in, 1});
  return ((i >= start) & (i < end)).to(type) / (end - start).to(type);
}

// `name`: adaptive_avg_pool2d or adaptive_avg_pool3d, over the last n dimensions.
void checkAdaptiveInput(const char* name, const Tensor& input, int64_t n) {
  const int64_t ndim = input.dim();
  TORCH_CHECK(ndim == n + 1 || ndim == n + 2, name, "(): Expected ", n + 1, "D or ", n + 2,
              "D tensor, but got ", input.sizes());
  for (int64_t i = ndim - n; i < ndim; ++i)
    TORCH_CHECK(input.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has "
                "sizes ",
                input.sizes(), " with dimension ", i, " being empty");
}

// x's last n dimensions, each multiplied by its averaging matrix ([in, out]; `transposed`: the
// gradient's [out, in]).
Tensor alongEach(Tensor x, int64_t n, at::IntArrayRef in, at::IntArrayRef out, bool transposed,
                 const Tensor& like, at::ScalarType type) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = x.dim() - n + i;
    const Tensor m = adaptiveMatrix(in[i], out[i], like, type);
    x = x.movedim(dim, -1).matmul(transposed ? m.t() : m).movedim(-1, dim);
  }
  return x;
}

// Half and bfloat16 average in float and round once. CPU's 3-D kernel adds and divides in the
// dtype itself, so it can differ by more than a rounding; ours is the nearer to the exact mean.
bool nativeAdaptive(const Tensor& t) { return floatingKernelType(t); }

// _adaptive_avg_pool2d (N = 2) and _adaptive_avg_pool3d (N = 3).
template <int N>
struct AdaptiveAvgPool {
  static constexpr const char* kName = N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  static bool native(const Tensor& self, at::IntArrayRef) { return nativeAdaptive(self); }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size) {
    TORCH_CHECK(output_size.size() == N, kName, ": output_size must be ", N);
    checkAdaptiveInput(kName, self, N);
    for (const int64_t o : output_size)
      TORCH_CHECK(o >= 0, kName,
                  ": elements of output_size must be greater than or equal to 0 but received ",
                  output_size);
    const auto type = at::toOpMathType(self.scalar_type());
    const at::IntArrayRef in = self.sizes().slice(self.dim() - N);
    if (global(output_size))
      return self.to(type).mean(spatialDims(self), true).to(self.scalar_type());
    const Tensor y = alongEach(self.to(type), N, in, output_size, false, self, type);
    return y.contiguous().to(self.scalar_type());
  }

  // An output of one position per plane (a classifier head's global average pool): a mean.
  static bool global(at::IntArrayRef output_size) {
    return std::all_of(output_size.begin(), output_size.end(), [](int64_t o) { return o == 1; });
  }
  static c10::DimVector spatialDims(const Tensor& t) {
    c10::DimVector dims;
    for (int64_t i = t.dim() - N; i < t.dim(); ++i) dims.push_back(i);
    return dims;
  }
};

template <int N>
struct AdaptiveAvgPoolBackward {
  static bool native(const Tensor& grad_output, const Tensor& self) {
    return nativeAdaptive(grad_output) && grad_output.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self) {
    checkAdaptiveInput(AdaptiveAvgPool<N>::kName, self, N);
    TORCH_CHECK(grad_output.dim() == self.dim(), AdaptiveAvgPool<N>::kName,
                "_backward: expected grad_output of ", self.dim(), " dimensions, got ",
                grad_output.sizes());
    const auto type = at::toOpMathType(self.scalar_type());
    const at::IntArrayRef in = self.sizes().slice(self.dim() - N);
    if (AdaptiveAvgPool<N>::global(grad_output.sizes().slice(grad_output.dim() - N))) {
      const int64_t count = c10::multiply_integers(in);
      return (grad_output.to(type) / count)
          .expand(self.sizes())
          .to(self.scalar_type())
          .contiguous();
    }
    const Tensor gx = alongEach(grad_output.to(type), N, in,
                                grad_output.sizes().slice(grad_output.dim() - N), true, self, type);
    return gx.contiguous().to(self.scalar_type());
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

// adaptive_max_pool2d (N = 2) and adaptive_max_pool3d (N = 3): every window's elements
// gathered at once (windows of one size, filled up to it with their last position), then the
// max of each, first in CPU's scan order on ties.
template <int N>
struct AdaptiveMaxPool {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, at::IntArrayRef) { return floatingKernelType(self); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, at::IntArrayRef output_size,
                                            const Output& out, const Output& indices_out) {
    // ATen's own meta function checks the arguments (CPU's messages), on a tensor of no data.
    const Tensor meta = at::empty(self.sizes(), self.options().device(at::kMeta));
    if constexpr (N == 2) {
      at::meta::adaptive_max_pool2d(meta, output_size);
    } else {
      at::meta::adaptive_max_pool3d(meta, output_size);
    }
    const at::IntArrayRef in = self.sizes().slice(self.dim() - N);
    c10::DimVector shape(self.sizes().begin(), self.sizes().end() - N);
    shape.append(output_size.begin(), output_size.end());
    const auto longs = self.options().dtype(at::kLong);
    if (self.numel() == 0 || c10::multiply_integers(output_size) == 0) {
      return maxPoolResults(self, shape, at::empty(shape, self.options()), at::empty(shape, longs),
                            out, indices_out);
    }
    // [out_0 .. out_N-1, k_0 .. k_N-1] window elements, by their index into the input's plane.
    Tensor plane = at::zeros({}, longs);
    int64_t in_stride = 1, window = 1;
    for (int64_t i = N - 1; i >= 0; --i) {
      const int64_t k = (in[i] + output_size[i] - 1) / output_size[i] + 1;
      c10::DimVector view(2 * N, 1);
      view[i] = output_size[i];
      view[N + i] = k;
      plane = plane + adaptiveWindows(in[i], output_size[i], k, longs).view(view) * in_stride;
      in_stride *= in[i];
      window *= k;
    }
    const int64_t outputs = c10::multiply_integers(output_size);
    plane = plane.reshape({outputs, window});
    const Tensor x = self.reshape({-1, in_stride});
    auto [values, k] = x.index_select(1, plane.reshape({-1})).view({-1, outputs, window}).max(-1);
    const Tensor index = plane.gather(1, k.reshape({-1, outputs}).t()).t();
    return maxPoolResults(self, shape, values, index, out, indices_out);
  }
};

template <int N>
struct AdaptiveMaxPoolBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
    return nativeMaxPoolBackward(grad_output, self, indices);
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                        const Output& out) {
    const auto meta = [](const Tensor& t) {
      return at::empty(t.sizes(), t.options().device(at::kMeta));
    };
    if constexpr (N == 2) {
      at::meta::adaptive_max_pool2d_backward(meta(grad_output), meta(self), meta(indices));
    } else {
      at::meta::adaptive_max_pool3d_backward(meta(grad_output), meta(self), meta(indices));
    }
    return maxPoolBackward(grad_output, self, indices, N, out);
  }
};

// --- max_unpool2d, max_unpool3d -------------------------------------------------------------

// self's values written at `indices` into zero planes of output_size (N = 2 or 3 dimensions).
Tensor maxUnpool(const char* name, const Tensor& self, const Tensor& indices,
                 at::IntArrayRef output_size, int64_t n, const Output& out) {
  const int64_t ndim = self.dim();
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == n, "There should be exactly ", n,
              " elements in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(ndim == n + 1 || ndim == n + 2, "Input to ", name, " should be a ", n + 1, "d or ",
              n + 2, "d Tensor, but got a tensor with ", ndim, " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < ndim; ++i)
    TORCH_CHECK(self.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  int64_t plane = 1;
  for (const int64_t o : output_size) plane *= o;
  const int64_t planes = c10::multiply_integers(self.sizes().slice(0, ndim - n));
  const int64_t inner = c10::multiply_integers(self.sizes().slice(ndim - n));
  const Tensor idx = indices.reshape({planes, inner}).to(self.device());
  std::ostringstream what;
  what << "Found an invalid max index (output volumes are of size " << output_size << ")";
  checkIndexRange(idx, plane, false, 1, what.str().c_str(), false);
  c10::DimVector shape(self.sizes().begin(), self.sizes().end() - n);
  shape.append(output_size.begin(), output_size.end());
  Tensor result = out.allocate(shape, self.options());
  Tensor flat = at::zeros({planes, plane}, self.options());
  flat.scatter_(1, idx, self.reshape({planes, inner}));
  result.copy_(flat.view(shape));
  return out.finish(result);
}

struct MaxUnpool2d {
  static bool native(const Tensor& self, const Tensor&, at::IntArrayRef) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                        const Output& out) {
    return maxUnpool("max_unpooling2d_forward_out_cpu", self, indices, output_size, 2, out);
  }
};

struct MaxUnpool3d {
  static bool native(const Tensor& self, const Tensor&, at::IntArrayRef, at::IntArrayRef,
                     at::IntArrayRef) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                        at::IntArrayRef stride, at::IntArrayRef padding, const Output& out) {
    TORCH_CHECK(stride.size() == 3,
                "There should be exactly three elements (depth, height, width) "
                "in stride, but got: ",
                stride.size(), " elements.");
    TORCH_CHECK(padding.size() == 3,
                "There should be exactly three elements (depth, height, "
                "width) in padding, but got: ",
                padding.size(), " elements.");
    TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
                "strides should be greater than zero, but got stride: ", stride);
    return maxUnpool("max_unpooling3d_forward_out_cpu", self, indices, output_size, 3, out);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<AvgPool<Pool2d>>(m, "avg_pool2d", nullptr, "avg_pool2d.out");
  registerForms<AvgPoolBackward<Pool2d>>(m, "avg_pool2d_backward", nullptr,
                                         "avg_pool2d_backward.grad_input");
  registerForms<AvgPool<Pool3d>>(m, "avg_pool3d", nullptr, "avg_pool3d.out");
  registerForms<AvgPoolBackward<Pool3d>>(m, "avg_pool3d_backward", nullptr,
                                         "avg_pool3d_backward.grad_input");
  registerNative<AdaptiveAvgPool<2>>(m, "_adaptive_avg_pool2d");
  registerNative<AdaptiveAvgPoolBackward<2>>(m, "_adaptive_avg_pool2d_backward");
  registerNative<AdaptiveAvgPool<3>>(m, "_adaptive_avg_pool3d");
  registerNative<AdaptiveAvgPoolBackward<3>>(m, "_adaptive_avg_pool3d_backward");
  registerForms<MaxUnpool2d>(m, "max_unpool2d", nullptr, "max_unpool2d.out");
  registerForms<MaxUnpool3d>(m, "max_unpool3d", nullptr, "max_unpool3d.out");
  registerForms<MaxPoolWithIndices<Pool2d>>(m, "max_pool2d_with_indices", nullptr,
                                            "max_pool2d_with_indices.out");
  registerForms<MaxPoolWithIndicesBackward<Pool2d>>(m, "max_pool2d_with_indices_backward", nullptr,
                                                    "max_pool2d_with_indices_backward.grad_input");
  registerForms<MaxPoolWithIndices<Pool3d>>(m, "max_pool3d_with_indices", nullptr,
                                            "max_pool3d_with_indices.out");
  registerForms<MaxPoolWithIndicesBackward<Pool3d>>(m, "max_pool3d_with_indices_backward", nullptr,
                                                    "max_pool3d_with_indices_backward.grad_input");
  registerForms<AdaptiveMaxPool<2>>(m, "adaptive_max_pool2d", nullptr, "adaptive_max_pool2d.out");
  registerForms<AdaptiveMaxPoolBackward<2>>(m, "adaptive_max_pool2d_backward", nullptr,
                                            "adaptive_max_pool2d_backward.grad_input");
  registerForms<AdaptiveMaxPool<3>>(m, "adaptive_max_pool3d", nullptr, "adaptive_max_pool3d.out");
  registerForms<AdaptiveMaxPoolBackward<3>>(m, "adaptive_max_pool3d_backward", nullptr,
                                            "adaptive_max_pool3d_backward.grad_input");
}

}  // namespace
}  // namespace accel
