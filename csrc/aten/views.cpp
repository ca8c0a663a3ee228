// View and metadata ops: they never touch data, so they are all native. ATen's device-agnostic
// implementations do the work; resize_ and set_ grow storage through the accel allocator.
#include <ATen/native/Resize.h>
#include <ATen/native/TensorShape.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/strides.h>
#include <torch/library.h>

#include "core/device_allocator.h"

namespace accel {
namespace {

// Grows the storage when the new geometry needs more bytes (resize never shrinks storage).
void ensureStorageBytes(const at::Tensor& self, size_t nbytes) {
  c10::Storage storage = self.storage();
  if (nbytes <= storage.nbytes()) return;
  c10::DeviceGuard guard(self.device());
  at::native::resize_bytes_nocuda(storage, static_cast<int64_t>(nbytes));
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  for (int64_t s : size) {
    TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  }
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->sizes() == size && !memory_format) return self;
  c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Contiguous);
  TORCH_CHECK(format != c10::MemoryFormat::Preserve, "Unsupported memory format ", format);
  impl->set_sizes_contiguous(size);
  if (format != c10::MemoryFormat::Contiguous) impl->empty_tensor_restride(format);
  size_t nbytes = at::detail::computeStorageNbytes(size, impl->strides(), self.itemsize(),
                                                   impl->storage_offset());
  if (self.numel() > 0) ensureStorageBytes(self, nbytes);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t storage_offset,
                        c10::IntArrayRef size, c10::IntArrayRef stride) {
  at::native::checkSetStorage(self, source, storage_offset, size, stride);
  // No stride given (set_(storage, offset, size)): contiguous, as CPU's set_.
  const c10::DimVector contiguous = c10::contiguous_strides(size);
  if (stride.data() == nullptr) stride = contiguous;
  self.unsafeGetTensorImpl()->set_sizes_and_strides(size, stride, storage_offset);
  size_t nbytes = at::detail::computeStorageNbytes(size, stride, self.itemsize(), storage_offset);
  if (self.numel() > 0) ensureStorageBytes(self, nbytes);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t numel = static_cast<int64_t>(source.nbytes() / self.itemsize());
  return set_storage(self, source, 0, {numel}, {1});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(),
                     source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, deviceAllocator(),
                       /*resizable=*/true);
  return set_storage(self, storage, 0, {0}, {1});
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("view", at::native::view);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("unfold", at::native::unfold);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
}

}  // namespace
}  // namespace accel
