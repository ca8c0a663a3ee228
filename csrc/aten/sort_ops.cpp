// sort (always stable) and topk (the first k of a sort). The sorted dimension is moved last
// and made dense, sorted per slice by the sort kernel, and copied back into the outputs.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
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
  if (out.dim() == 0)
    copyOnDevice(out, last.view(at::IntArrayRef()));
  else
    copyOnDevice(out.movedim(dim, -1), last);
}

// values and indices results of `shape` (exact dtypes, as CPU's sort and topk).
std::pair<at::Tensor, at::Tensor> results(const at::Tensor& self, at::IntArrayRef shape,
                                          const Output& values, const Output& indices) {
  at::Tensor v = values.allocate(shape, self.options(), Output::DTypeRule::Exact);
  at::Tensor i = indices.allocate(shape, self.options().dtype(at::kLong), Output::DTypeRule::Exact);
  values.checkNoOverlap({self});
  indices.checkNoOverlap({self});
  return {v, i};
}

struct Sort {
  static constexpr int kOutputs = 2;
  static bool native(const at::Tensor& self, std::optional<bool>, int64_t, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<at::Tensor, at::Tensor> compute(const at::Tensor& self,
                                                    std::optional<bool> stable, int64_t dim,
                                                    bool descending, const Output& values,
                                                    const Output& indices) {
    dim = at::maybe_wrap_dim(dim, self.dim());
    auto [v, i] = results(self, self.sizes(), values, indices);
    if (self.numel() > 0) {
      auto [k, idx] = sortedLast(self, dim, descending);
      writeBack(v, k, dim);
      writeBack(i, idx, dim);
    }
    return {values.finish(v), indices.finish(i)};
  }
};

struct Topk {
  static constexpr int kOutputs = 2;
  static bool native(const at::Tensor& self, c10::SymInt, int64_t, bool, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<at::Tensor, at::Tensor> compute(const at::Tensor& self, c10::SymInt k_,
                                                    int64_t dim, bool largest, bool sorted,
                                                    const Output& values, const Output& indices) {
    const int64_t k = k_.expect_int();
    dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
    const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
    TORCH_CHECK(k >= 0 && k <= size, "selected index k out of range");
    auto shape = self.sizes().vec();
    if (!shape.empty()) shape[dim] = k;
    auto [v, i] = results(self, shape, values, indices);
    if (v.numel() > 0) {
      // Sorted order is a valid answer for sorted=False too.
      auto [keys, idx] = sortedLast(self, dim, largest);
      writeBack(v, keys.narrow(-1, 0, k), dim);
      writeBack(i, idx.narrow(-1, 0, k), dim);
    }
    return {values.finish(v), indices.finish(i)};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Sort>(m, "sort.stable", nullptr, "sort.values_stable");
  registerForms<Topk>(m, "topk", nullptr, "topk.values");
}

}  // namespace
}  // namespace accel
