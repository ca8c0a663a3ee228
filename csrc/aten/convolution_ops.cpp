// Convolutions. ATen routes a PrivateUse1 convolution to convolution_overrideable, whose
// default kernel only raises. Until accel has convolution kernels, both directions run the
// CPU's convolution through the counted fallback instead.
#include <ATen/native/ConvUtils.h>
#include <torch/library.h>

#include "aten/fallback.h"

namespace accel {
namespace {

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
  static auto op = findOp("aten::convolution", "");
  return inAccelFormat(fallbackCall<at::Tensor>(op, input, weight, bias, stride, padding, dilation,
                                                transposed, output_padding, groups),
                       input, weight);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
    c10::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
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
