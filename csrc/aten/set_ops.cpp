// Set membership: isin (generation checks its tokens against the stop tokens with it),
// composed of native accel ops: each element compared with every test element, in chunks of
// the test elements that keep the comparison matrix near 16M entries.
// unique (_unique2, _unique, unique_dim) and unique_consecutive (unique_dim_consecutive),
// composed of native ops: a stable sort (always, as CUDA; of whole slices, lexicographically,
// along a dim), the first element or slice of each run of equal ones, and one nonzero for their
// positions, which synchronises for the output size as CUDA does.
#include <ATen/ops/any.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

constexpr int64_t kCompareEntries = int64_t(1) << 24;

struct Isin {
  static bool native(const Tensor& elements, const Tensor& test_elements, bool, bool) {
    return kernelSupports(elements.scalar_type()) && kernelSupports(test_elements.scalar_type()) &&
           test_elements.device() == elements.device();
  }
  static Tensor compute(const Tensor& elements, const Tensor& test_elements, bool /*unique*/,
                        bool invert, const Output& out) {
    Tensor result = out.allocate(elements.sizes(), elements.options().dtype(at::kBool),
                                 Output::DTypeRule::Exact);
    out.checkNoOverlap({elements, test_elements});
    const Tensor flat = elements.reshape({-1, 1});
    const Tensor tests = test_elements.reshape({-1});
    const int64_t m = tests.numel();
    const int64_t chunk =
        std::max<int64_t>(1, kCompareEntries / std::max<int64_t>(1, flat.size(0)));
    Tensor found = at::zeros({flat.size(0)}, result.options());
    for (int64_t start = 0; start < m; start += chunk) {
      found.logical_or_(flat.eq(tests.narrow(0, start, std::min(chunk, m - start))).any(-1));
    }
    if (invert) found.logical_not_();
    result.copy_(found.view(elements.sizes()));
    return out.finish(result);
  }
};

// The order that sorts rows [n, k] lexicographically, stably: one stable sort per column, the
// last column first (each pass keeps the order the later columns gave the ties).
Tensor lexicographicOrder(const Tensor& rows) {
  Tensor order = at::arange(rows.size(0), rows.options().dtype(at::kLong));
  for (int64_t c = rows.size(1) - 1; c >= 0; --c) {
    const Tensor keys = rows.select(1, c).index_select(0, order);
    order = order.index_select(0, std::get<1>(keys.sort(/*stable=*/true, 0, false)));
  }
  return order;
}

// values [runs, k], inverse [n] and counts of the runs of equal rows of rows [n, k > 0], sorted
// first when `sort`. Inverse and counts are empty when not asked for. Rows with NaN equal
// nothing, as on CPU.
std::tuple<Tensor, Tensor, Tensor> uniqueRuns(const Tensor& rows, bool sort, bool return_inverse,
                                              bool return_counts) {
  const at::TensorOptions longs = rows.options().dtype(at::kLong);
  const int64_t n = rows.size(0), k = rows.size(1);
  Tensor inverse = at::empty({return_inverse ? n : 0}, longs);
  Tensor counts = at::empty({0}, longs);
  if (n == 0) return {rows.clone(), inverse, counts};
  Tensor sorted = rows, order;
  if (sort && k == 1) {
    std::tie(sorted, order) = rows.view({n}).sort(/*stable=*/true, 0, false);
    sorted = sorted.view({n, 1});
  } else if (sort) {
    order = lexicographicOrder(rows);
    sorted = rows.index_select(0, order);
  }
  Tensor first = at::empty({n}, rows.options().dtype(at::kBool));
  first.narrow(0, 0, 1).fill_(true);
  Tensor rest = first.narrow(0, 1, n - 1);
  const Tensor later = sorted.narrow(0, 1, n - 1), earlier = sorted.narrow(0, 0, n - 1);
  if (k == 1)
    at::ne_out(rest, later.view({n - 1}), earlier.view({n - 1}));
  else
    at::any_out(rest, at::ne(later, earlier), 1);
  const Tensor starts = first.nonzero().view({-1});
  if (return_inverse) {
    const Tensor run = first.cumsum(0).sub_(1);
    if (sort)
      inverse.scatter_(0, order, run);
    else
      inverse.copy_(run);
  }
  if (return_counts) {
    const int64_t runs = starts.numel();
    Tensor ends = at::empty({runs}, longs);
    ends.narrow(0, 0, runs - 1).copy_(starts.narrow(0, 1, runs - 1));
    ends.narrow(0, runs - 1, 1).fill_(n);
    counts = ends.sub_(starts);
  }
  return {sorted.index_select(0, starts), inverse, counts};
}

// The runs of self's elements in row-major order; the inverse in self's shape.
std::tuple<Tensor, Tensor, Tensor> uniqueElements(const Tensor& self, bool sort,
                                                  bool return_inverse, bool return_counts) {
  auto [values, inverse, counts] =
      uniqueRuns(self.reshape({-1, 1}), sort, return_inverse, return_counts);
  if (return_inverse) inverse = inverse.view(self.sizes());
  return {values.view({-1}), inverse, counts};
}

// The runs of self's slices along dim, in CPU's layout (the slices back to back, dim moved
// back in place). CPU returns the inverse and counts whether asked for or not, and so do these;
// empty inputs raise CPU's errors.
std::tuple<Tensor, Tensor, Tensor> uniqueAlongDim(const Tensor& self, int64_t dim, bool sort) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0) {
    const auto zero_sized = std::count(self.sizes().begin(), self.sizes().end(), 0);
    TORCH_CHECK(self.size(dim) == 0,
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied");
    TORCH_CHECK(zero_sized == 1,
                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    const Tensor none = at::empty({0}, self.options().dtype(at::kLong));
    return {at::empty(self.sizes(), self.options()), none, none.clone()};
  }
  const Tensor moved = self.movedim(dim, 0);
  auto [values, inverse, counts] =
      uniqueRuns(moved.reshape({self.size(dim), -1}), sort, true, true);
  std::vector<int64_t> sizes = moved.sizes().vec();
  sizes[0] = values.size(0);
  return {values.view(sizes).movedim(0, dim), inverse, counts};
}

struct Unique2 {
  static bool native(const Tensor& self, bool, bool, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& self, bool /*sorted*/,
                                                    bool return_inverse, bool return_counts) {
    return uniqueElements(self, true, return_inverse, return_counts);
  }
};

struct Unique {
  static bool native(const Tensor& self, bool, bool) { return kernelSupports(self.scalar_type()); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, bool /*sorted*/,
                                            bool return_inverse) {
    auto [values, inverse, counts] = uniqueElements(self, true, return_inverse, false);
    return {values, inverse};
  }
};

struct UniqueConsecutive {
  static bool native(const Tensor& self, bool, bool, std::optional<int64_t> dim) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& self, bool return_inverse,
                                                    bool return_counts,
                                                    std::optional<int64_t> dim) {
    if (dim) return uniqueAlongDim(self, *dim, false);
    return uniqueElements(self, false, return_inverse, return_counts);
  }
};

struct UniqueDim {
  static bool native(const Tensor& self, int64_t, bool, bool, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& self, int64_t dim,
                                                    bool /*sorted*/, bool, bool) {
    return uniqueAlongDim(self, dim, true);
  }
};

struct UniqueDimConsecutive {
  static bool native(const Tensor& self, int64_t, bool, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& self, int64_t dim, bool, bool) {
    return uniqueAlongDim(self, dim, false);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<Unique2>(m, "_unique2");
  registerNative<Unique>(m, "_unique");
  registerNative<UniqueConsecutive>(m, "unique_consecutive");
  registerNative<UniqueDim>(m, "unique_dim");
  registerNative<UniqueDimConsecutive>(m, "unique_dim_consecutive");
  registerForms<Isin>(m, "isin.Tensor_Tensor", nullptr, "isin.Tensor_Tensor_out");
}

}  // namespace
}  // namespace accel
