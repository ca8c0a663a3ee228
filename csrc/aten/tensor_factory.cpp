// empty and empty_strided: the two ops every accel tensor is born from; and
// _efficientzerotensor, the storage-less zeros torch.func's jacfwd and hessian start from.
#include <ATen/EmptyTensor.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "core/device_allocator.h"
#include "core/device.h"

namespace accel {
namespace {

constexpr c10::DispatchKeySet kAccelKeys(c10::DispatchKey::PrivateUse1);

c10::DeviceIndex targetDevice(std::optional<c10::Device> device) {
  return resolveDevice(device ? device->index() : -1);
}

at::Tensor empty(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                 std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!pin_memory.value_or(false), "Only dense CPU tensors can be pinned");
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided,
              "accel supports only strided tensors, got layout ", *layout);
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, targetDevice(device)));
  return at::detail::empty_generic(size, deviceAllocator(), kAccelKeys,
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(!pin_memory.value_or(false), "Only dense CPU tensors can be pinned");
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided,
              "accel supports only strided tensors, got layout ", *layout);
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, targetDevice(device)));
  return at::detail::empty_strided_generic(size, stride, deviceAllocator(), kAccelKeys,
                                           c10::dtype_or_default(dtype));
}

// As CPU's and CUDA's: no memory, the ZeroTensor key; ATen's ZeroTensor kernels treat it as
// zeros and materialise it (as accel zeros) for any other op.
at::Tensor efficientZeroTensor(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory) {
  const c10::Device target(c10::DeviceType::PrivateUse1, targetDevice(device));
  at::native::ZeroTensorAllocator allocator(target);
  return at::detail::empty_generic(size, &allocator,
                                   kAccelKeys | c10::DispatchKeySet(c10::DispatchKey::ZeroTensor),
                                   c10::dtype_or_default(dtype), std::nullopt);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty);
  m.impl("empty_strided", empty_strided);
  m.impl("_efficientzerotensor", efficientZeroTensor);
}

}  // namespace
}  // namespace accel
