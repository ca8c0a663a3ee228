// Set membership: isin (generation checks its tokens against the stop tokens with it),
// composed of native accel ops: each element compared with every test element, in chunks of
// the test elements that keep the comparison matrix near 16M entries.
// unique (_unique2, _unique) and unique_consecutive without dim, composed of native ops: a
// stable sort (always, as CUDA), the first element of each run of equal values, and one
// nonzero for their positions, which synchronises for the output size as CUDA does.
#include <ATen/ops/empty.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>

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

// values, inverse (self's shape) and counts of the runs of equal values of self's elements in
// row-major order, sorted first when `sort`. Inverse and counts are empty when not asked for.
std::tuple<Tensor, Tensor, Tensor> uniqueRuns(const Tensor& self, bool sort, bool return_inverse,
                                              bool return_counts) {
  const at::TensorOptions longs = self.options().dtype(at::kLong);
  Tensor values = self.reshape({-1});
  const int64_t n = values.numel();
  Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, longs);
  Tensor counts = at::empty({0}, longs);
  if (n == 0) return {values.clone(), inverse, counts};
  Tensor order;
  if (sort) std::tie(values, order) = values.sort(/*stable=*/true, 0, false);
  Tensor first = at::empty({n}, self.options().dtype(at::kBool));
  first.narrow(0, 0, 1).fill_(true);
  Tensor rest = first.narrow(0, 1, n - 1);
  at::ne_out(rest, values.narrow(0, 1, n - 1), values.narrow(0, 0, n - 1));
  const Tensor starts = first.nonzero().view({-1});
  if (return_inverse) {
    const Tensor run = first.cumsum(0).sub_(1);
    if (sort)
      inverse.view({-1}).scatter_(0, order, run);
    else
      inverse.view({-1}).copy_(run);
  }
  if (return_counts) {
    const int64_t runs = starts.numel();
    Tensor ends = at::empty({runs}, longs);
    ends.narrow(0, 0, runs - 1).copy_(starts.narrow(0, 1, runs - 1));
    ends.narrow(0, runs - 1, 1).fill_(n);
    counts = ends.sub_(starts);
  }
  return {values.index_select(0, starts), inverse, counts};
}

struct Unique2 {
  static bool native(const Tensor& self, bool, bool, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& self, bool /*sorted*/,
                                                    bool return_inverse, bool return_counts) {
    return uniqueRuns(self, true, return_inverse, return_counts);
  }
};

struct Unique {
  static bool native(const Tensor& self, bool, bool) { return kernelSupports(self.scalar_type()); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, bool /*sorted*/,
                                            bool return_inverse) {
    auto [values, inverse, counts] = uniqueRuns(self, true, return_inverse, false);
    return {values, inverse};
  }
};

struct UniqueConsecutive {
  static bool native(const Tensor& self, bool, bool, std::optional<int64_t> dim) {
    return kernelSupports(self.scalar_type()) && !dim;
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& self, bool return_inverse,
                                                    bool return_counts, std::optional<int64_t>) {
    return uniqueRuns(self, false, return_inverse, return_counts);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<Unique2>(m, "_unique2");
  registerNative<Unique>(m, "_unique");
  registerNative<UniqueConsecutive>(m, "unique_consecutive");
  registerForms<Isin>(m, "isin.Tensor_Tensor", nullptr, "isin.Tensor_Tensor_out");
}

}  // namespace
}  // namespace accel
