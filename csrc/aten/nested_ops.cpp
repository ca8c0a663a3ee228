// Nested (ragged) tensors on accel. PyTorch's own modules make them on every backend they let
// through their fast paths, PrivateUse1 included: nn.TransformerEncoder in eval mode turns a
// padded batch with a padding mask into a nested tensor. A nested tensor's buffer is an
// ordinary accel tensor and its sizes live on the CPU, so ATen's device-agnostic kernels that
// make, move, copy, view and take apart nested tensors are registered here as they are (the ones
// CUDA registers too). Every other op on a nested accel tensor (its math, the transformer
// fast path's fused layers) goes through the counted CPU fallback, which moves nested
// tensors with these kernels.
#include <ATen/ops/_nested_tensor_size_native.h>
#include <ATen/ops/_nested_tensor_storage_offsets_native.h>
#include <ATen/ops/_nested_tensor_strides_native.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/alias_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/is_same_size_native.h>
#include <ATen/ops/select_native.h>
#include <ATen/ops/to_padded_tensor_native.h>
#include <ATen/ops/unbind_native.h>
#include <ATen/ops/values_native.h>
#include <torch/library.h>

#include "aten/fallback.h"

namespace accel {
namespace {

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("empty_like", at::native::empty_like_nested);
  m.impl("_to_copy", at::native::_to_copy_nested);
  m.impl("copy_", at::native::copy_nested_);
  m.impl("clone", at::native::clone_nested);
  m.impl("alias", at::native::alias_nested);
  m.impl("values", at::native::values_nested);
  m.impl("unbind.int", at::native::NestedTensor_unbind);  // views of the buffer
  m.impl("select.int", at::native::select_nested);
  m.impl("is_same_size", at::native::nested_is_same_size);
  m.impl("to_padded_tensor", at::native::NestedTensor_to_padded_tensor_generic);
  m.impl("_nested_tensor_size", at::native::_nested_tensor_size);
  m.impl("_nested_tensor_strides", at::native::_nested_tensor_strides);
  m.impl("_nested_tensor_storage_offsets", at::native::_nested_tensor_storage_offsets);
}

TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

}  // namespace
}  // namespace accel
