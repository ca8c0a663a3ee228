// Convolutions and F.unfold / F.fold. ATen routes a PrivateUse1 convolution to
// convolution_overrideable, whose default kernel only raises; ATen has checked the shapes
// (channels, groups) by then. Float convolutions of 1 to 3 spatial dimensions run natively as
// im2col + batched GEMM (kernels/im2col.h): the columns [N, G, C/G * K, L] of a window are
// multiplied by each group's weight [OC/G, C/G * K], which yields the output in NCHW order
// directly; the input gradient is col2im of the weight's transpose times the output's
// gradient, the weight gradient the output's gradient times the columns' transpose (a
// transposed BLAS operand, no copy). A transposed convolution is the same with the two kernels
// swapped. aten::im2col and aten::col2im (F.unfold, F.fold) are the 2-D kernels themselves.
#include <ATen/TensorOperators.h>
#include <ATen/native/ConvUtils.h>
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

#include <array>
#include <tuple>
#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/im2col.h"

namespace accel {
namespace {

// A sliding window over an image [N, C, *image] (im2col's input, col2im's output): its spatial
// sizes, the window positions `out` (L = prod(out)) and the window's geometry.
struct Window {
  c10::DimVector image, out, kernel, stride, padding, dilation;

  int64_t dims() const { return static_cast<int64_t>(kernel.size()); }
  int64_t positions() const { return c10::multiply_integers(out); }
  int64_t kernelSize() const { return c10::multiply_integers(kernel); }

  kernels::Im2colDesc desc(const at::Tensor& image_t, const at::Tensor& columns) const {
    kernels::Im2colDesc d;
    d.dtype = toKernelDType(image_t.scalar_type());
    d.batch = image_t.size(0);
    d.channels = image_t.size(1);
    d.image = static_cast<char*>(image_t.data_ptr());
    d.columns = static_cast<char*>(columns.data_ptr());
    d.image_strides[0] = image_t.stride(0);
    d.image_strides[1] = image_t.stride(1);
    const int64_t front = kernels::kMaxIm2colDims - dims();
    for (int64_t i = 0; i < dims(); ++i) {
      d.in[front + i] = image[i];
      d.out[front + i] = out[i];
      d.kernel[front + i] = kernel[i];
      d.stride[front + i] = stride[i];
      d.padding[front + i] = padding[i];
      d.dilation[front + i] = dilation[i];
      d.image_strides[2 + front + i] = image_t.stride(2 + i);
    }
    return d;
  }
};

void launch(rt::Error (*entry)(const kernels::Im2colDesc&, rt::Stream),
            const kernels::Im2colDesc& d, const at::Tensor& on) {
  const int device = on.device().index();
  ACCEL_RT_CHECK(entry(d, currentRuntimeStream(device)), device);
}

// [N, C, *image] (any strides) -> columns [N, C * K, L].
at::Tensor im2col(const at::Tensor& image, const Window& w) {
  at::Tensor cols =
      at::empty({image.size(0), image.size(1) * w.kernelSize(), w.positions()}, image.options());
  if (cols.numel() > 0) launch(kernels::im2colTable().im2col, w.desc(image, cols), image);
  return cols;
}

// Columns [N, C * K, L] -> the contiguous image [N, C, *image] summing them.
at::Tensor col2im(const at::Tensor& columns, const Window& w, int64_t channels) {
  c10::DimVector sizes{columns.size(0), channels};
  sizes.append(w.image.begin(), w.image.end());
  at::Tensor image = at::empty(sizes, columns.options());
  const at::Tensor cols = columns.contiguous();
  if (image.numel() > 0) launch(kernels::im2colTable().col2im, w.desc(image, cols), image);
  return image;
}

bool nativeConv(const at::Tensor& input, const at::Tensor& weight) {
  const c10::ScalarType t = input.scalar_type();
  const int64_t dims = input.dim() - 2;
  return at::isFloatingType(t) && kernelSupports(t) && weight.scalar_type() == t && dims >= 1 &&
         dims <= kernels::kMaxIm2colDims && weight.dim() == input.dim();
}

// One convolution: N, groups, the channels on the image side (the input; a transposed
// convolution's output) and on the column side, and the window over the image.
struct ConvShape {
  int64_t batch, groups, image_channels, column_channels;
  bool transposed;
  Window w;

  ConvShape(const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
            c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed_,
            c10::IntArrayRef output_padding, int64_t groups_)
      : batch(input.size(0)), groups(groups_), transposed(transposed_) {
    const int64_t dims = input.dim() - 2;
    auto at = [](c10::IntArrayRef v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; };
    // Not transposed: weight [OC, C/G, *k]; transposed: weight [C, OC/G, *k].
    image_channels = transposed ? weight.size(1) * groups : input.size(1);
    column_channels = transposed ? input.size(1) : weight.size(0);
    for (int64_t i = 0; i < dims; ++i) {
      w.kernel.push_back(weight.size(i + 2));
      w.stride.push_back(at(stride, i));
      w.padding.push_back(at(padding, i));
      w.dilation.push_back(at(dilation, i));
      const int64_t extent = w.dilation[i] * (w.kernel[i] - 1) + 1;
      const int64_t x = input.size(i + 2);
      if (transposed) {  // the image is the output
        w.out.push_back(x);
        w.image.push_back((x - 1) * w.stride[i] - 2 * w.padding[i] + extent +
                          at(output_padding, i));
      } else {
        w.image.push_back(x);
        w.out.push_back((x + 2 * w.padding[i] - extent) / w.stride[i] + 1);
      }
    }
  }
  // Per group: the image side's channels times K (the GEMM's long side), the column side's.
  int64_t imageRows() const { return image_channels / groups * w.kernelSize(); }
  int64_t columnRows() const { return column_channels / groups; }

  // The weight as [N * G, column rows, image rows] (a broadcast view when G == 1), the GEMM
  // operand whose product with the columns [N * G, image rows, L] is the column-side tensor.
  // Both weight layouts, [OC, C/G, *k] and the transposed [C, OC/G, *k], are already that.
  at::Tensor batchedWeight(const at::Tensor& weight) const {
    const at::Tensor wg = weight.reshape({groups, columnRows(), imageRows()});
    if (groups == 1) return wg.expand({batch, wg.size(1), wg.size(2)});
    return wg.unsqueeze(0)
        .expand({batch, groups, wg.size(1), wg.size(2)})
        .reshape({batch * groups, wg.size(1), wg.size(2)});
  }
  // A column-side tensor [N, C, *out] as [N * G, column rows, L].
  at::Tensor columnSide(const at::Tensor& t) const {
    return t.reshape({batch * groups, columnRows(), w.positions()});
  }
  c10::DimVector columnSideSizes() const {
    c10::DimVector sizes{batch, column_channels};
    sizes.append(w.out.begin(), w.out.end());
    return sizes;
  }
};

void addBias(at::Tensor& out, const std::optional<at::Tensor>& bias) {
  if (!bias.has_value() || !bias->defined()) return;
  c10::DimVector shape(out.dim(), 1);
  shape[1] = out.size(1);
  out.add_(bias->reshape(shape));
}

// The image side from the column side: col2im(weight^T @ x), plus the bias. In half and
// bfloat16 the products stay float until col2im has summed them and the bias is added, so the
// image is rounded once, as CPU's is.
at::Tensor imageFromColumns(const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, const ConvShape& s) {
  if (at::isReducedFloatingType(x.scalar_type())) {
    std::optional<at::Tensor> bias_float;
    if (bias.has_value() && bias->defined()) bias_float = bias->to(at::kFloat);
    return imageFromColumns(x.to(at::kFloat), weight.to(at::kFloat), bias_float, s)
        .to(x.scalar_type());
  }
  const at::Tensor cols = at::bmm(s.batchedWeight(weight).transpose(1, 2), s.columnSide(x));
  at::Tensor image =
      col2im(cols.view({s.batch, s.image_channels * s.w.kernelSize(), s.w.positions()}), s.w,
             s.image_channels);
  addBias(image, bias);
  return image;
}

// The column side from the image side: weight @ im2col(x), plus the bias. The bias is the
// GEMM's C (beta = 1), so a half or bfloat16 output is rounded once, after the bias is added,
// as CPU's is (a product rounded and then added to the bias was off by up to an ulp).
at::Tensor columnsFromImage(const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, const ConvShape& s) {
  const at::Tensor cols = im2col(x, s.w).view({s.batch * s.groups, s.imageRows(), s.w.positions()});
  if (!bias.has_value() || !bias->defined())
    return at::bmm(s.batchedWeight(weight), cols).view(s.columnSideSizes());
  const c10::DimVector sizes = s.columnSideSizes();
  c10::DimVector shape(sizes.size(), 1);
  shape[1] = s.column_channels;
  at::Tensor out = bias->reshape(shape).expand(sizes).clone(at::MemoryFormat::Contiguous);
  s.columnSide(out).baddbmm_(s.batchedWeight(weight), cols);
  return out;
}

// The weight's gradient: sum over n of the column side times the image's columns transposed.
at::Tensor weightGrad(const at::Tensor& column_side, const at::Tensor& image_side,
                      const at::Tensor& weight, const ConvShape& s) {
  const at::Tensor cols =
      im2col(image_side, s.w).view({s.batch * s.groups, s.imageRows(), s.w.positions()});
  at::Tensor g = at::bmm(s.columnSide(column_side), cols.transpose(1, 2))
                     .view({s.batch, s.groups, s.columnRows(), s.imageRows()})
                     .sum(0);
  return g.reshape(weight.sizes());
}

at::Tensor convForward(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, const ConvShape& s) {
  if (s.transposed) return imageFromColumns(input, weight, bias, s);
  return columnsFromImage(input, weight, bias, s);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convBackward(const at::Tensor& grad_output,
                                                            const at::Tensor& input,
                                                            const at::Tensor& weight,
                                                            const ConvShape& s,
                                                            std::array<bool, 3> mask) {
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) {
    grad_input = s.transposed ? columnsFromImage(grad_output, weight, std::nullopt, s)
                              : imageFromColumns(grad_output, weight, std::nullopt, s);
  }
  if (mask[1]) {
    grad_weight = s.transposed ? weightGrad(input, grad_output, weight, s)
                               : weightGrad(grad_output, input, weight, s);
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
  if (nativeConv(input, weight) &&
      (!bias.has_value() || !bias->defined() || bias->scalar_type() == input.scalar_type())) {
    const ConvShape s(input, weight, stride, padding, dilation, transposed, output_padding, groups);
    return inAccelFormat(convForward(input, weight, bias, s), input, weight);
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
  if (nativeConv(input, weight) && grad_output.scalar_type() == input.scalar_type()) {
    const ConvShape s(input, weight, stride, padding, dilation, transposed, output_padding, groups);
    auto [gi, gw, gb] = convBackward(grad_output, input, weight, s, output_mask);
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

// F.unfold / F.fold's 2-D window; the shape checks are ATen's (the messages CPU gives).
Window window2d(c10::IntArrayRef image, c10::IntArrayRef kernel, c10::IntArrayRef dilation,
                c10::IntArrayRef padding, c10::IntArrayRef stride) {
  Window w;
  for (int i = 0; i < 2; ++i) {
    w.image.push_back(image[i]);
    w.kernel.push_back(kernel[i]);
    w.dilation.push_back(dilation[i]);
    w.padding.push_back(padding[i]);
    w.stride.push_back(stride[i]);
    w.out.push_back((image[i] + 2 * padding[i] - (dilation[i] * (kernel[i] - 1) + 1)) / stride[i] +
                    1);
  }
  return w;
}

void checkWindowArgs(const char* op, c10::IntArrayRef kernel, c10::IntArrayRef dilation,
                     c10::IntArrayRef padding, c10::IntArrayRef stride) {
  TORCH_CHECK(kernel.size() == 2, op, ": kernel_size must have 2 elements, got ", kernel.size());
  TORCH_CHECK(dilation.size() == 2, op, ": dilation must have 2 elements, got ", dilation.size());
  TORCH_CHECK(padding.size() == 2, op, ": padding must have 2 elements, got ", padding.size());
  TORCH_CHECK(stride.size() == 2, op, ": stride must have 2 elements, got ", stride.size());
}

bool nativeWindowDType(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type()) && kernelSupports(t.scalar_type());
}

at::Tensor im2colOp(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                    c10::IntArrayRef padding, c10::IntArrayRef stride) {
  if (!nativeWindowDType(self)) {
    static auto op = findOp("aten::im2col", "");
    return fallbackCall<at::Tensor>(op, self, kernel_size, dilation, padding, stride);
  }
  checkWindowArgs("im2col", kernel_size, dilation, padding, stride);
  at::native::im2col_shape_check(self, at::Tensor(), kernel_size[0], kernel_size[1], dilation[0],
                                 dilation[1], padding[0], padding[1], stride[0], stride[1]);
  const bool batched = self.dim() == 4;
  const at::Tensor x = batched ? self : self.unsqueeze(0);
  const at::Tensor cols =
      im2col(x, window2d(x.sizes().slice(2), kernel_size, dilation, padding, stride));
  return batched ? cols : cols.squeeze(0);
}

at::Tensor col2imOp(const at::Tensor& self, c10::IntArrayRef output_size,
                    c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                    c10::IntArrayRef padding, c10::IntArrayRef stride) {
  if (!nativeWindowDType(self)) {
    static auto op = findOp("aten::col2im", "");
    return fallbackCall<at::Tensor>(op, self, output_size, kernel_size, dilation, padding, stride);
  }
  checkWindowArgs("col2im", kernel_size, dilation, padding, stride);
  TORCH_CHECK(output_size.size() == 2, "col2im: output_size must have 2 elements, got ",
              output_size.size());
  at::native::col2im_shape_check(self, at::Tensor(), output_size[0], output_size[1], kernel_size[0],
                                 kernel_size[1], dilation[0], dilation[1], padding[0], padding[1],
                                 stride[0], stride[1]);
  const bool batched = self.dim() == 3;
  const at::Tensor cols = batched ? self : self.unsqueeze(0);
  const int64_t channels = cols.size(1) / (kernel_size[0] * kernel_size[1]);
  const at::Tensor image =
      col2im(cols, window2d(output_size, kernel_size, dilation, padding, stride), channels);
  return batched ? image : image.squeeze(0);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
  m.impl("im2col", im2colOp);
  m.impl("col2im", col2imOp);
}

}  // namespace
}  // namespace accel
