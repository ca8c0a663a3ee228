// sort (always stable), topk (the first k of a sort, or of a preselection for a small k),
// kthvalue, median, nanmedian and mode (one position of a sort). The sorted dimension is moved
// last and made dense, sorted per slice by the sort kernel, and copied back into the outputs.
// searchsorted and bucketize: a binary search per value by the sort family's search kernel.
#include <algorithm>

#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/index_desc.h"
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
      auto [keys, idx] = k <= kMaxPreselect && size >= minTile(k)
                             ? preselectedFirst(self, dim, k, largest)
                             : sortedLast(self, dim, largest);
      writeBack(v, keys.narrow(-1, 0, k), dim);
      writeBack(i, idx.narrow(-1, 0, k), dim);
    }
    return {values.finish(v), indices.finish(i)};
  }

 private:
  // A small k of a long slice: each tile's first k keys (the preselection kernel), then the
  // stable sort of those candidates alone. The same answer as the sort of the whole slice,
  // with tiles * k keys sorted instead of n (a sampling step's top 50 of 32000 logits). A
  // tile's cost grows with k log k, so tiles are long: a slice is cut only into as many as
  // it takes to give the device kTasks of them.
  static constexpr int64_t kMaxPreselect = 256;
  static constexpr int64_t kTasks = 16;
  static int64_t minTile(int64_t k) { return std::max<int64_t>(1024, 8 * k); }

  static std::pair<at::Tensor, at::Tensor> preselectedFirst(const at::Tensor& self, int64_t dim,
                                                            int64_t k, bool largest) {
    at::Tensor moved = self.movedim(dim, -1).contiguous();
    const int64_t n = moved.size(-1), slices = moved.numel() / n;
    const int64_t wanted = std::clamp<int64_t>((kTasks + slices - 1) / slices, 1, n / minTile(k));
    const int64_t tile = n / wanted, tiles = n / tile;
    c10::DimVector shape(moved.sizes().begin(), moved.sizes().end());
    shape.back() = tiles * k;
    at::Tensor cand_keys = at::empty(shape, moved.options());
    at::Tensor cand_idx = at::empty(shape, moved.options().dtype(at::kLong));
    kernels::TopkDesc d;
    d.keys = static_cast<const char*>(moved.const_data_ptr());
    d.out_keys = static_cast<char*>(cand_keys.data_ptr());
    d.out_idx = cand_idx.data_ptr<int64_t>();
    d.dtype = toKernelDType(moved.scalar_type());
    d.nslices = slices;
    d.n = n;
    d.tile = tile;
    d.k = k;
    d.descending = largest;
    const int device = self.device().index();
    ACCEL_RT_CHECK(kernels::sortTable().topk_tiles(d, currentRuntimeStream(device)), device);
    auto [keys, order] = sortedLast(cand_keys, -1, largest);
    const IndicesInRange sorted_positions;
    return {keys, cand_idx.gather(-1, order)};
  }
};

// --- kthvalue, median, nanmedian, mode: one position of each slice's sort ---------------------
// The values are CPU's. The index is that of the picked key of the stable sort: among equal
// values CPU's quickselect (kthvalue, the medians) or unstable sort (mode) may return any of
// them, so any is right (the OpInfo sweep checks such indices by the values they select:
// devtools/coverage.py).

// CPU computes kthvalue and the medians for every real dtype but bool.
bool selectable(const at::Tensor& self) {
  return kernelSupports(self.scalar_type()) && self.scalar_type() != at::kBool;
}

enum class Pick { Kth, Median, NanMedian, Mode };

// The sorted position per slice ([..., 1], int64) of the sorted [..., n] keys. A median of a
// slice with NaN is NaN (the first NaN, sorted after every number, at position "numbers"); a
// nanmedian is the lower median of the numbers (position 0, a NaN, when all are NaN). A mode
// is the last key of the first longest run of equal keys: CPU's smallest most frequent value.
at::Tensor positionOf(const at::Tensor& keys, Pick pick, int64_t k) {
  const int64_t n = keys.size(-1);
  if (pick == Pick::Mode) {
    const at::Tensor j = at::arange(n, keys.options().dtype(at::kLong)).expand(keys.sizes());
    at::Tensor starts = at::ones(keys.sizes(), keys.options().dtype(at::kBool));
    starts.narrow(-1, 1, n - 1).copy_(keys.narrow(-1, 1, n - 1) != keys.narrow(-1, 0, n - 1));
    const at::Tensor run_start = std::get<0>(at::where(starts, j, 0).cummax(-1));
    return std::get<1>((j - run_start).max(-1, /*keepdim=*/true));
  }
  if (pick == Pick::Kth || !at::isFloatingType(keys.scalar_type())) {
    auto one = keys.sizes().vec();  // keys are at least 1-d
    one.back() = 1;
    return at::full(one, pick == Pick::Kth ? k : (n - 1) / 2, keys.options().dtype(at::kLong));
  }
  const at::Tensor numbers = keys.isnan().logical_not_().sum(-1, /*keepdim=*/true);
  if (pick == Pick::NanMedian) return (numbers - 1).clamp_min_(0).div_(2, "floor");
  return at::where(numbers < n, numbers, (n - 1) / 2);
}

// values, indices of `pick` along dim (the reduced shape, or keepdim's).
std::tuple<at::Tensor, at::Tensor> select(const at::Tensor& self, int64_t dim, bool keepdim,
                                          Pick pick, int64_t k, const Output& values,
                                          const Output& indices) {
  auto shape = self.sizes().vec();
  if (!shape.empty()) {
    if (keepdim)
      shape[dim] = 1;
    else
      shape.erase(shape.begin() + dim);
  }
  auto [v, i] = results(self, shape, values, indices);
  if (self.numel() > 0) {
    auto [keys, idx] = sortedLast(self, dim, false);
    const at::Tensor pos = positionOf(keys, pick, k);
    at::Tensor kv = keys.gather(-1, pos), ki = idx.gather(-1, pos);
    if (self.dim() == 0 || !keepdim) {
      kv = kv.squeeze(-1);
      ki = ki.squeeze(-1);
      copyOnDevice(v, self.dim() == 0 ? kv.view(c10::IntArrayRef{}) : kv);
      copyOnDevice(i, self.dim() == 0 ? ki.view(c10::IntArrayRef{}) : ki);
    } else {
      writeBack(v, kv, dim);
      writeBack(i, ki, dim);
    }
  }
  return {values.finish(v), indices.finish(i)};
}

struct Kthvalue {
  static constexpr int kOutputs = 2;
  static bool native(const at::Tensor& self, c10::SymInt, int64_t, bool) {
    return selectable(self);
  }
  static std::tuple<at::Tensor, at::Tensor> compute(const at::Tensor& self, c10::SymInt k_,
                                                    int64_t dim, bool keepdim, const Output& values,
                                                    const Output& indices) {
    const int64_t k = k_.expect_int();
    dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
    const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
    TORCH_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ",
                dim);
    return select(self, dim, keepdim, Pick::Kth, k - 1, values, indices);
  }
};

template <Pick P>
struct MedianDim {
  static constexpr int kOutputs = 2;
  static bool native(const at::Tensor& self, int64_t, bool) { return selectable(self); }
  static std::tuple<at::Tensor, at::Tensor> compute(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, const Output& values,
                                                    const Output& indices) {
    dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
    TORCH_CHECK_INDEX(self.dim() == 0 || self.size(dim) > 0,
                      P == Pick::Median ? "median" : "nanmedian", "(): Expected reduction dim ",
                      dim, " to have non-zero size.");
    return select(self, dim, keepdim, P, 0, values, indices);
  }
};

struct Mode {
  static constexpr int kOutputs = 2;
  static bool native(const at::Tensor& self, int64_t, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<at::Tensor, at::Tensor> compute(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, const Output& values,
                                                    const Output& indices) {
    dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/true);
    TORCH_CHECK_INDEX(self.dim() == 0 || self.size(dim) > 0, "mode(): Expected reduction dim ", dim,
                      " to have non-zero size.");
    return select(self, dim, keepdim, Pick::Mode, 0, values, indices);
  }
};

// median() / nanmedian() of all elements: a 0-dim value (NaN when empty, as CPU's; CPU's
// error for an empty integer tensor comes through the fallback).
template <Pick P>
struct MedianAll {
  static bool native(const at::Tensor& self) {
    return selectable(self) && (self.numel() > 0 || at::isFloatingType(self.scalar_type()));
  }
  static at::Tensor compute(const at::Tensor& self, const Output& out) {
    at::Tensor result = out.allocate({}, self.options(), Output::DTypeRule::Exact);
    out.checkNoOverlap({self});
    if (self.numel() == 0) {
      result.fill_(std::numeric_limits<double>::quiet_NaN());
      return out.finish(result);
    }
    const at::Tensor flat = self.reshape({-1});
    auto [keys, idx] = sortedLast(flat, 0, false);
    copyOnDevice(result, keys.gather(-1, positionOf(keys, P, 0)).view(c10::IntArrayRef{}));
    return out.finish(result);
  }
};

// --- searchsorted, bucketize -------------------------------------------------------------------

// The insertion points of `self`'s values in `boundaries` (CPU's checks and dtype promotion).
at::Tensor searchsorted(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32,
                        bool right, std::optional<std::string_view> side, const at::Tensor& sorter,
                        const Output& out) {
  const c10::ScalarType dtype = out_int32 ? at::kInt : at::kLong;
  at::native::searchsorted_pre_check(
      boundaries, self, out.isGiven() ? out.tensor() : at::empty({0}, self.options().dtype(dtype)),
      out_int32, right, side, sorter);
  at::Tensor result = out.allocate(self.sizes(), self.options().dtype(dtype),
                                   Output::DTypeRule::Exact, /*contiguous=*/true);
  // CPU has no overlap check here (out= may alias the values or the boundaries): a result
  // that overlaps an input is computed aside, so the search reads the inputs as they were.
  for (const at::Tensor& input : {self, boundaries, sorter}) {
    if (input.defined() && at::get_overlap_status(result, input) != at::MemOverlapStatus::No) {
      result = at::empty(self.sizes(), self.options().dtype(dtype));
      break;
    }
  }
  if (self.numel() == 0) return out.finish(result);
  at::Tensor values, keys, order;
  at::native::searchsorted_maybe_trim_input_tensors(values, keys, order, self, boundaries, sorter);
  const at::Tensor& v = values.defined() ? values : self;
  const at::Tensor& b = keys.defined() ? keys : boundaries;
  const at::Tensor& o = order.defined() ? order : sorter;
  kernels::SearchDesc d;
  d.boundaries = static_cast<const char*>(b.const_data_ptr());
  d.sorter = o.defined() ? o.const_data_ptr<int64_t>() : nullptr;
  d.values = static_cast<const char*>(v.const_data_ptr());
  d.out = static_cast<char*>(result.data_ptr());
  d.dtype = toKernelDType(v.scalar_type());
  d.out_dtype = toKernelDType(dtype);
  d.k = b.size(-1);
  d.shared_row = b.dim() == 1;
  d.m = d.shared_row || v.dim() == 0 ? v.numel() : v.size(-1);
  d.nrows = v.numel() / d.m;
  d.right = right || (side && *side == "right");
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::sortTable().search(d, currentRuntimeStream(device)), device);
  return out.finish(result);
}

// CPU's kernel has no bool searchsorted: those calls get its error through the fallback.
bool searchable(c10::ScalarType t) { return kernelSupports(t) && t != at::kBool; }
bool searchable(const at::Tensor& boundaries, const at::Tensor& self) {
  return searchable(boundaries.scalar_type()) && searchable(self.scalar_type());
}

struct SearchSorted {
  static bool native(const at::Tensor& boundaries, const at::Tensor& self, bool, bool,
                     std::optional<std::string_view>, const std::optional<at::Tensor>&) {
    return searchable(boundaries, self);
  }
  static at::Tensor compute(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32,
                            bool right, std::optional<std::string_view> side,
                            const std::optional<at::Tensor>& sorter, const Output& out) {
    return searchsorted(boundaries, self, out_int32, right, side, sorter.value_or(at::Tensor()),
                        out);
  }
};

struct SearchSortedScalar {
  static bool native(const at::Tensor& boundaries, const at::Scalar&, bool, bool,
                     std::optional<std::string_view>, const std::optional<at::Tensor>&) {
    return searchable(boundaries.scalar_type());
  }
  static at::Tensor compute(const at::Tensor& boundaries, const at::Scalar& self, bool out_int32,
                            bool right, std::optional<std::string_view> side,
                            const std::optional<at::Tensor>& sorter, const Output& out) {
    return searchsorted(boundaries,
                        at::native::searchsorted_scalar_tensor(self, boundaries.device()),
                        out_int32, right, side, sorter.value_or(at::Tensor()), out);
  }
};

// bucketize is searchsorted with the arguments swapped and 1-D boundaries.
at::Tensor bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                     bool right, const Output& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right, std::nullopt, at::Tensor(), out);
}

struct Bucketize {
  static bool native(const at::Tensor& self, const at::Tensor& boundaries, bool, bool) {
    return searchable(boundaries, self);
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                            bool right, const Output& out) {
    return bucketize(self, boundaries, out_int32, right, out);
  }
};

struct BucketizeScalar {
  static bool native(const at::Scalar&, const at::Tensor& boundaries, bool, bool) {
    return searchable(boundaries.scalar_type());
  }
  static at::Tensor compute(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32,
                            bool right, const Output& out) {
    return bucketize(at::native::searchsorted_scalar_tensor(self, boundaries.device()), boundaries,
                     out_int32, right, out);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<SearchSorted>(m, "searchsorted.Tensor", nullptr, "searchsorted.Tensor_out");
  registerForms<SearchSortedScalar>(m, "searchsorted.Scalar", nullptr, "searchsorted.Scalar_out");
  registerForms<Bucketize>(m, "bucketize.Tensor", nullptr, "bucketize.Tensor_out");
  registerForms<BucketizeScalar>(m, "bucketize.Scalar", nullptr, "bucketize.Scalar_out");
  registerForms<Sort>(m, "sort.stable", nullptr, "sort.values_stable");
  registerForms<Topk>(m, "topk", nullptr, "topk.values");
  registerForms<Kthvalue>(m, "kthvalue", nullptr, "kthvalue.values");
  registerForms<MedianDim<Pick::Median>>(m, "median.dim", nullptr, "median.dim_values");
  registerForms<MedianDim<Pick::NanMedian>>(m, "nanmedian.dim", nullptr, "nanmedian.dim_values");
  registerForms<Mode>(m, "mode", nullptr, "mode.values");
  registerForms<MedianAll<Pick::Median>>(m, "median", nullptr, "median.out");
  registerForms<MedianAll<Pick::NanMedian>>(m, "nanmedian", nullptr, "nanmedian.out");
}

}  // namespace
}  // namespace accel
