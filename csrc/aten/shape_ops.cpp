// Shape ops: nonzero (synchronises for the count, like CUDA), cat (device copies into
// slices of the output), triu and tril, flip and roll.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "aten/index_desc.h"
#include "core/rt_check.h"
#include "core/sync_point.h"
#include "core/stream_pool.h"
#include "kernels/copy.h"
#include "kernels/index.h"

namespace accel {
namespace {

// ---- nonzero ------------------------------------------------------------------------------

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type Long but got scalar type", out.scalar_type());
  TORCH_CHECK(self.dim() <= kernels::kMaxDims, "nonzero is not supported for tensors with more than ", kernels::kMaxDims, " dimensions");
  if (!kernelSupports(self.scalar_type())) {
    static auto op = findOp("aten::nonzero", "out");
    return fallbackCall<at::Tensor>(op, self, out), out;
  }
  const int device = self.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  int64_t count = 0;
  if (self.numel() > 0) {
    at::Tensor dev_count = at::empty({1}, self.options().dtype(at::kLong));
    ACCEL_RT_CHECK(kernels::indexTable().nonzero_count(rowMajorDesc(self),
                                                       dev_count.data_ptr<int64_t>(), stream),
                   device);
    // The output's shape needs the count on the host.
    hostSyncPoint("aten::nonzero");
    ACCEL_RT_CHECK(rt::driver().memcpyAsync(&count, dev_count.data_ptr(), sizeof(count),
                                            rt::MemcpyKind::DeviceToHost, stream),
                   device);
    ACCEL_RT_CHECK(rt::driver().streamSynchronize(stream), device);
  }
  out.resize_({count, self.dim()});
  if (count == 0 || self.dim() == 0) return out;
  at::Tensor dense = out.is_contiguous() ? out : at::empty({count, self.dim()}, out.options());
  ACCEL_RT_CHECK(kernels::indexTable().nonzero(rowMajorDesc(self), dense.data_ptr<int64_t>(), stream),
                 device);
  if (!dense.is_same(out)) copyOnDevice(out, dense);
  return out;
}

at::Tensor nonzero(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return nonzero_out(self, out);
}

// ---- cat ----------------------------------------------------------------------------------

// ATen skips legacy empty tensors (1-D, size 0) whatever their shape.
bool skipped(const at::Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

at::Tensor& cat_out(const at::ITensorListRef& tensors_ref, int64_t dim, at::Tensor& out) {
  std::vector<at::Tensor> tensors(tensors_ref.begin(), tensors_ref.end());
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const at::Tensor* ref = nullptr;
  for (const auto& t : tensors) {
    TORCH_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", &t - tensors.data(),
                ") cannot be concatenated");
    if (!skipped(t) && ref == nullptr) ref = &t;
  }
  const c10::ScalarType dtype = at::native::result_type(tensors_ref);
  TORCH_CHECK(c10::canCast(dtype, out.scalar_type()), "torch.cat(): input types can't be cast to the desired output type ", out.scalar_type());
  if (ref == nullptr) {  // all legacy empty
    out.resize_({0});
    return out;
  }
  dim = at::maybe_wrap_dim(dim, ref->dim());
  std::vector<int64_t> shape = ref->sizes().vec();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    if (skipped(t)) continue;
    TORCH_CHECK(t.device() == out.device(), "Expected all tensors to be on the same device, but found at least two devices, ", t.device(), " and ", out.device(), "!");
    TORCH_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      TORCH_CHECK(d == dim || t.size(d) == ref->size(d), "Sizes of tensors must match except in dimension ", dim,
                  ". Expected size ", ref->size(d), " but got size ", t.size(d), " for tensor number ", i, " in the list.");
    }
    total += t.size(dim);
  }
  shape[dim] = total;
  for (const auto& t : tensors) {
    TORCH_CHECK(skipped(t) || !out.is_alias_of(t) || out.numel() == 0, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location.");
  }
  out.resize_(shape);
  int64_t offset = 0;
  for (const auto& t : tensors) {
    if (skipped(t) || t.size(dim) == 0) continue;
    copyOnDevice(out.narrow(dim, offset, t.size(dim)), t);
    offset += t.size(dim);
  }
  return out;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  at::Tensor out = at::empty({0}, tensors.front().options().dtype(at::native::result_type(tensors)));
  return cat_out(tensors, dim, out);
}

bool catSupported(const at::ITensorListRef& tensors) {
  for (const auto& t : tensors)
    if (!kernelSupports(t.scalar_type())) return false;
  return true;
}

at::Tensor cat_entry(const at::ITensorListRef& tensors, int64_t dim) {
  if (!catSupported(tensors)) {
    static auto op = findOp("aten::cat", "");
    return fallbackCall<at::Tensor>(op, std::vector<at::Tensor>(tensors.begin(), tensors.end()), dim);
  }
  return cat(tensors, dim);
}

at::Tensor& cat_out_entry(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  if (!catSupported(tensors) || !kernelSupports(out.scalar_type())) {
    static auto op = findOp("aten::cat", "out");
    return fallbackCall<at::Tensor>(op, std::vector<at::Tensor>(tensors.begin(), tensors.end()), dim, out), out;
  }
  return cat_out(tensors, dim, out);
}

// ---- triu / tril --------------------------------------------------------------------------

void triangle(const at::Tensor& out, const at::Tensor& self, int64_t diagonal, bool upper) {
  TORCH_CHECK(self.dim() >= 2, upper ? "triu" : "tril", ": input tensor must have at least 2 dimensions");
  if (self.numel() == 0) return;
  kernels::ElementwiseDesc d;
  d.ndim = static_cast<int>(self.dim());
  d.numel = self.numel();
  d.noperands = 2;
  const at::Tensor* ops[2] = {&out, &self};
  for (int k = 0; k < 2; ++k) {
    d.op[k].data = static_cast<char*>(ops[k]->data_ptr());
    d.op[k].dtype = toKernelDType(ops[k]->scalar_type());
  }
  for (int i = 0; i < d.ndim; ++i) {
    const int64_t src = self.dim() - 1 - i;
    d.sizes[i] = self.size(src);
    for (int k = 0; k < 2; ++k) d.op[k].strides[i] = ops[k]->stride(src) * ops[k]->element_size();
  }
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::indexTable().triangle(d, diagonal, upper, currentRuntimeStream(device)),
                 device);
}

template <bool Upper>
at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  if (!kernelSupports(self.scalar_type()) || out.scalar_type() != self.scalar_type()) {
    static auto op = findOp(Upper ? "aten::triu" : "aten::tril", "out");
    return fallbackCall<at::Tensor>(op, self, diagonal, out), out;
  }
  if (!out.is_same(self)) {
    out.resize_(self.sizes());
    if (out.is_alias_of(self)) {  // partial overlap: go through a copy of self
      at::Tensor copy = self.clone();
      triangle(out, copy, diagonal, Upper);
      return out;
    }
  }
  triangle(out, self, diagonal, Upper);
  return out;
}
template <bool Upper>
at::Tensor triangle_functional(const at::Tensor& self, int64_t diagonal) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  return triangle_out<Upper>(self, diagonal, out);
}
template <bool Upper>
at::Tensor& triangle_inplace(at::Tensor& self, int64_t diagonal) {
  return triangle_out<Upper>(self, diagonal, self);
}

// ---- flip / roll -----------------------------------------------------------------------

// flip is a copy from self read backwards: the copy kernel takes the negated strides (never
// a tensor: PyTorch tensors have no negative strides).
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  if (!kernelSupports(self.scalar_type())) {
    static auto op = findOp("aten::flip", "");
    return fallbackCall<at::Tensor>(op, self, dims);
  }
  TORCH_CHECK(self.dim() <= kernels::kMaxDims, "flip: too many dimensions");
  std::vector<bool> flipped(self.dim(), false);
  for (int64_t d : dims) {
    d = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!flipped[d], "dims has duplicates, original flip dims size=", dims.size());
    flipped[d] = true;
  }
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (self.numel() == 0) return out;
  kernels::ElementwiseDesc d;
  d.ndim = static_cast<int>(self.dim());
  d.numel = self.numel();
  d.noperands = 2;
  d.op[0].data = static_cast<char*>(out.data_ptr());
  d.op[1].data = static_cast<char*>(self.data_ptr());
  d.op[0].dtype = d.op[1].dtype = toKernelDType(self.scalar_type());
  const int64_t item = self.element_size();
  for (int i = 0; i < d.ndim; ++i) {
    const int64_t src = self.dim() - 1 - i;
    d.sizes[i] = self.size(src);
    d.op[0].strides[i] = out.stride(src) * item;
    d.op[1].strides[i] = self.stride(src) * item;
    if (flipped[src]) {
      d.op[1].data += (self.size(src) - 1) * self.stride(src) * item;
      d.op[1].strides[i] = -d.op[1].strides[i];
    }
  }
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::copyTable().copy(d, currentRuntimeStream(device)), device);
  return out;
}

// roll along one dimension: two slice copies.
void rollInto(const at::Tensor& out, const at::Tensor& self, int64_t shift, int64_t dim) {
  const int64_t n = self.size(dim);
  if (n == 0) return;
  shift = ((shift % n) + n) % n;
  if (shift == 0) {
    copyOnDevice(out, self);
    return;
  }
  copyOnDevice(out.narrow(dim, shift, n - shift), self.narrow(dim, 0, n - shift));
  copyOnDevice(out.narrow(dim, 0, shift), self.narrow(dim, n - shift, shift));
}

at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef sym_shifts, at::IntArrayRef dims) {
  const at::IntArrayRef shifts = C10_AS_INTARRAYREF_SLOW(sym_shifts);
  if (!kernelSupports(self.scalar_type())) {
    static auto op = findOp("aten::roll", "");
    return fallbackCall<at::Tensor>(op, self, sym_shifts, dims);
  }
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {  // roll the flattened tensor
    at::Tensor flat = at::empty({self.numel()}, self.options());
    rollInto(flat, self.reshape({-1}), shifts[0], 0);
    return flat.view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ",
              shifts.size(), ", dims:", dims.size());
  at::Tensor current = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    at::Tensor next = at::empty_like(self, at::MemoryFormat::Contiguous);
    rollInto(next, current, shifts[i], at::maybe_wrap_dim(dims[i], self.dim()));
    current = next;
  }
  return current;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", nonzero);
  m.impl("nonzero.out", nonzero_out);
  m.impl("cat", cat_entry);
  m.impl("cat.out", cat_out_entry);
  m.impl("triu", triangle_functional<true>);
  m.impl("triu_", triangle_inplace<true>);
  m.impl("triu.out", triangle_out<true>);
  m.impl("tril", triangle_functional<false>);
  m.impl("tril_", triangle_inplace<false>);
  m.impl("tril.out", triangle_out<false>);
  m.impl("flip", flip);
  m.impl("roll", roll);
}

}  // namespace
}  // namespace accel
