// sort (always stable) and topk (the first k of a sort). The sorted dimension is moved last
// and made dense, sorted per slice by the sort kernel, and copied back into the outputs.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/sort.h"

namespace accel {
namespace {

// Sorts `self` along dim into dense [..., n] buffers (the dimension last).
std::pair<at::Tensor, at::Tensor> sortedLast(const at::Tensor& self, int64_t dim, bool descending) {
  at::Tensor moved = self.dim() == 0 ? self.view({1}) : self.movedim(dim, -1);
  at::Tensor keys = at::empty(moved.sizes(), moved.options());
  copyOnDevice(keys, moved);
  at::Tensor indices = at::empty(moved.sizes(), moved.options().dtype(at::kLong));
  if (keys.numel() == 0) return {keys, indices};
  at::Tensor tmp_keys = at::empty_like(keys), tmp_indices = at::empty_like(indices);
  kernels::SortDesc d;
  d.keys = static_cast<char*>(keys.data_ptr());
  d.indices = indices.data_ptr<int64_t>();
  d.tmp_keys = static_cast<char*>(tmp_keys.data_ptr());
  d.tmp_indices = tmp_indices.data_ptr<int64_t>();
  d.dtype = toKernelDType(keys.scalar_type());
  d.n = keys.size(-1);
  d.nslices = keys.numel() / d.n;
  d.descending = descending;
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::sortTable().sort(d, currentRuntimeStream(device)), device);
  return {keys, indices};
}

void writeBack(const at::Tensor& out, const at::Tensor& last, int64_t dim) {
  if (out.dim() == 0) copyOnDevice(out, last.view(at::IntArrayRef()));
  else copyOnDevice(out.movedim(dim, -1), last);
}

std::tuple<at::Tensor&, at::Tensor&> sort_out(const at::Tensor& self, std::optional<bool> stable,
                                              int64_t dim, bool descending, at::Tensor& values,
                                              at::Tensor& indices) {
  if (!kernelSupports(self.scalar_type())) {
    static auto op = findOp("aten::sort", "values_stable");
    torch::jit::Stack stack;
    torch::jit::push(stack, self, stable, dim, descending, values, indices);
    cpuFallback(op, &stack);
    return {values, indices};
  }
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "sort(): values dtype must match self");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "sort(): indices must be a Long tensor");
  values.resize_(self.sizes());
  indices.resize_(self.sizes());
  if (self.numel() == 0) return {values, indices};
  auto [k, i] = sortedLast(self, dim, descending);
  writeBack(values, k, dim);
  writeBack(indices, i, dim);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& self, std::optional<bool> stable,
                                        int64_t dim, bool descending) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  sort_out(self, stable, dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, c10::SymInt k_, int64_t dim,
                                              bool largest, bool sorted, at::Tensor& values,
                                              at::Tensor& indices) {
  const int64_t k = k_.expect_int();
  if (!kernelSupports(self.scalar_type())) {
    static auto op = findOp("aten::topk", "values");
    torch::jit::Stack stack;
    torch::jit::push(stack, self, k, dim, largest, sorted, values, indices);
    cpuFallback(op, &stack);
    return {values, indices};
  }
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK(k >= 0 && k <= size, "selected index k out of range");
  auto shape = self.sizes().vec();
  if (!shape.empty()) shape[dim] = k;
  values.resize_(shape);
  indices.resize_(shape);
  if (values.numel() == 0) return {values, indices};
  // Sorted order is a valid answer for sorted=False too.
  auto [keys, idx] = sortedLast(self, dim, largest);
  writeBack(values, keys.narrow(-1, 0, k), dim);
  writeBack(indices, idx.narrow(-1, 0, k), dim);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t dim,
                                        bool largest, bool sorted) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  topk_out(self, k, dim, largest, sorted, values, indices);
  return {values, indices};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort.stable", sort);
  m.impl("sort.values_stable", sort_out);
  m.impl("topk", topk);
  m.impl("topk.values", topk_out);
}

}  // namespace
}  // namespace accel
