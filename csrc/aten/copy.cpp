// Copies between CPU and accel, and between accel tensors, on the current stream.
// Like CUDA: copies from or to pageable host memory return when the data has moved;
// non_blocking copies from or to pinned memory are asynchronous.
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "core/host_allocator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"
#include "kernels/copy.h"
#include "kernels/unary.h"

namespace accel {

at::Tensor storedValues(const at::Tensor& t) {
  at::Tensor v = t.is_conj() ? t.conj() : t;  // conj() of a conjugate view clears the bit
  return v.is_neg() ? v._neg_view() : v;      // so does _neg_view() of a negative view
}

namespace {

// The same elements reinterpreted as integers of the same size (complex128 as double pairs).
at::Tensor asBits(const at::Tensor& t) {
  switch (t.itemsize()) {
    case 1: return t.view(at::kByte);
    case 2: return t.view(at::kShort);
    case 4: return t.view(at::kInt);
    case 8: return t.view(at::kLong);
    case 16: return at::view_as_real(t);
  }
  TORCH_CHECK(false, "accel: cannot copy elements of ", t.itemsize(), " bytes (", t.scalar_type(),
              ")");
}

// t = op(t), for the lazy bits' conj and neg.
void applyInPlace(kernels::UnaryOp op, const at::Tensor& t) {
  auto iter =
      at::TensorIteratorConfig().add_output(t).add_const_input(t).resize_outputs(false).build();
  const int device = t.device().index();
  ACCEL_RT_CHECK(kernels::unaryTable().unary(op, makeDesc(iter), {}, currentRuntimeStream(device)),
                 device);
}

// Same dtype and both laid out as one contiguous block: a plain memcpy suffices.
bool isRawCopy(const at::Tensor& dst, const at::Tensor& src) {
  return dst.dtype() == src.dtype() && dst.sizes().equals(src.sizes()) && dst.is_contiguous() &&
         src.is_contiguous();
}

// Pageable copies wait; pinned non_blocking copies mark their block in use by the stream
// instead, so it is not reused before the copy ran.
void finishHostCopy(const at::Tensor& host, bool non_blocking, int device, rt::Stream stream) {
  if (non_blocking && isPinnedPtr(host.data_ptr())) {
    recordPinnedUse(host.data_ptr(), stream);
  } else {
    hostSyncPoint("aten::copy_ between accel and pageable CPU memory");
    ACCEL_RT_CHECK(rt::driver().streamSynchronize(stream), device);
  }
}

void copyToDevice(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  int device = dst.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  if (isRawCopy(dst, src)) {
    ACCEL_RT_CHECK(rt::driver().memcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                            rt::MemcpyKind::HostToDevice, stream),
                   device);
    finishHostCopy(src, non_blocking, device, stream);
    return;
  }
  // Convert and lay out on the host, where ATen's CPU copy is already fast, then move once.
  at::Tensor host = src.to(dst.scalar_type()).expand_as(dst).contiguous();
  if (dst.is_contiguous()) {
    copyToDevice(dst, host, /*non_blocking=*/false);
    return;
  }
  at::Tensor staged = at::empty(dst.sizes(), dst.options());
  copyToDevice(staged, host, /*non_blocking=*/false);
  copyOnDevice(dst, staged);
}

void copyToHost(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  int device = src.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  if (isRawCopy(dst, src)) {
    ACCEL_RT_CHECK(rt::driver().memcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                            rt::MemcpyKind::DeviceToHost, stream),
                   device);
    finishHostCopy(dst, non_blocking, device, stream);
    return;
  }
  at::Tensor dense = src;
  if (!src.is_contiguous()) {
    if (kernelKnows(src.scalar_type())) {
      dense = at::empty(src.sizes(), src.options());
      copyOnDevice(dense, src);
    } else {
      // No kernel for this dtype: move the bytes the view spans and rebuild it on the host.
      size_t span = at::detail::computeStorageNbytes(src.sizes(), src.strides(), src.itemsize());
      at::Tensor raw = at::empty({static_cast<int64_t>(span)}, dst.options().dtype(at::kByte));
      ACCEL_RT_CHECK(rt::driver().memcpyAsync(raw.data_ptr(), src.data_ptr(), span,
                                              rt::MemcpyKind::DeviceToHost, stream),
                     device);
      hostSyncPoint("aten::copy_ from accel to the CPU");
      ACCEL_RT_CHECK(rt::driver().streamSynchronize(stream), device);
      at::Tensor view = at::empty({0}, dst.options().dtype(src.scalar_type()))
                            .set_(raw.storage(), 0, src.sizes(), src.strides());
      dst.copy_(view);
      return;
    }
  }
  at::Tensor host = at::empty(dense.sizes(), dst.options().dtype(dense.scalar_type()));
  copyToHost(host, dense, /*non_blocking=*/false);
  dst.copy_(host);
}

// Across devices: stage a contiguous source, order the two streams around one memcpy.
void copyAcrossDevices(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor source = src;
  if (!isRawCopy(dst, src)) {
    c10::DeviceGuard guard(src.device());
    source = at::empty(dst.sizes(), src.options().dtype(dst.scalar_type()));
    copyOnDevice(source, src.expand_as(dst));
  }
  at::Tensor target = dst.is_contiguous() ? dst : at::empty(dst.sizes(), dst.options());
  int src_dev = src.device().index(), dst_dev = dst.device().index();
  rt::Stream src_stream = currentRuntimeStream(src_dev);
  rt::Stream dst_stream = currentRuntimeStream(dst_dev);
  // Cross-device copies are rare: synchronising both streams keeps the ordering obvious.
  hostSyncPoint("aten::copy_ between two accel devices");
  ACCEL_RT_CHECK(rt::driver().streamSynchronize(dst_stream), dst_dev);
  ACCEL_RT_CHECK(rt::driver().memcpyAsync(target.data_ptr(), source.data_ptr(), target.nbytes(),
                                          rt::MemcpyKind::DeviceToDevice, src_stream),
                 src_dev);
  ACCEL_RT_CHECK(rt::driver().streamSynchronize(src_stream), src_dev);
  if (!target.is_same(dst)) copyOnDevice(dst, target);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  const at::Tensor& src = self;
  if (dst.numel() == 0) return dst;
  // The lazy conjugate and negative bits reach here unresolved (see the fallthroughs below):
  // copy the stored values, then apply what differs to the destination.
  bool conj = src.is_conj() != dst.is_conj(), neg = src.is_neg() != dst.is_neg();
  if (conj || neg) {
    if (src.is_privateuseone() && src.device() == dst.device() && kernelKnows(src.scalar_type()) &&
        kernelKnows(dst.scalar_type())) {
      // On one device (resolve_conj, clone of a conjugate view): copy, then apply the bits.
      at::Tensor target = storedValues(dst);
      copyOnDevice(target, storedValues(src));
      if (conj) applyInPlace(kernels::UnaryOp::Conj, target);
      if (neg) applyInPlace(kernels::UnaryOp::Neg, target);
      return dst;
    }
    // Rare (lazy views crossing devices), so resolved with ATen's CPU kernels.
    at::Tensor values = storedValues(src).cpu();
    if (src.is_conj() != dst.is_conj()) values = values.conj_physical();
    if (src.is_neg() != dst.is_neg()) values = values.neg();
    copy_from(values, storedValues(dst), false);
    return dst;
  }
  bool src_accel = src.is_privateuseone(), dst_accel = dst.is_privateuseone();
  if (src_accel && dst_accel) {
    if (src.device() == dst.device()) {
      copyOnDevice(dst, src);
    } else {
      copyAcrossDevices(dst, src);
    }
  } else if (dst_accel && src.is_cpu()) {
    copyToDevice(dst, src, non_blocking);
  } else if (src_accel && dst.is_cpu()) {
    copyToHost(dst, src, non_blocking);
  } else {
    TORCH_CHECK(false, "accel: copy from ", src.device(), " to ", dst.device(),
                " is not supported");
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  at::native::resize_output(dst, self.sizes());
  return copy_from(self, dst, /*non_blocking=*/false);
}

// ATen's conjugate/negative fallback would resolve a lazy bit on the source with clone(),
// which copies through _copy_from again, forever. copy_from resolves the bits itself.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

}  // namespace

void copyOnDevice(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.numel() == 0) return;
  int device = dst.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  if (isRawCopy(dst, src)) {
    ACCEL_RT_CHECK(rt::driver().memcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                            rt::MemcpyKind::DeviceToDevice, stream),
                   device);
    return;
  }
  if (!kernelKnows(dst.scalar_type()) || !kernelKnows(src.scalar_type())) {
    if (dst.scalar_type() == src.scalar_type()) {
      // No conversion: move the bits as same-sized integers, which the copy kernel handles.
      copyOnDevice(asBits(dst), asBits(src));
    } else {
      // Conversions the kernels lack (to or from float8, ...) are done by the host.
      copyToDevice(dst, src.cpu(), /*non_blocking=*/false);
    }
    return;
  }
  auto iter = at::TensorIteratorConfig()
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  ACCEL_RT_CHECK(kernels::copyTable().copy(makeDesc(iter), stream), device);
}

}  // namespace accel
