// Set membership: isin (generation checks its tokens against the stop tokens with it),
// composed of native accel ops: each element compared with every test element, in chunks of
// the test elements that keep the comparison matrix near 16M entries.
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Isin>(m, "isin.Tensor_Tensor", nullptr, "isin.Tensor_Tensor_out");
}

}  // namespace
}  // namespace accel
