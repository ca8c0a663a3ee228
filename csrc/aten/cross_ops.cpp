// linalg_cross (torch.cross): the cross product along a dimension of size 3, composed of native
// elementwise ops on the broadcast inputs' three slices, as CPU computes each component
// (a1 b2 - a2 b1, ...). Real dtypes with both inputs of one dtype; the rest goes through the
// counted fallback.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sub.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

struct LinalgCross {
  static bool native(const at::Tensor& self, const at::Tensor& other, int64_t) {
    return kernelSupports(self.scalar_type()) && self.scalar_type() != at::kBool &&
           self.scalar_type() == other.scalar_type();
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                            const Output& out) {
    TORCH_CHECK(self.dim() == other.dim(),
                "linalg.cross: inputs must have the same number of dimensions.");
    const int64_t given = dim;  // CPU's message names the dimension as given
    dim = at::maybe_wrap_dim(dim, self.dim());
    TORCH_CHECK(self.size(dim) == 3 && other.size(dim) == 3, "linalg.cross: inputs dimension ",
                given, " must have length 3. Got ", self.size(dim), " and ", other.size(dim));
    const auto shape = at::infer_size(self.sizes(), other.sizes());
    at::Tensor result = out.allocate(shape, self.options(), Output::DTypeRule::Exact);
    out.checkNoOverlap({self, other});
    const at::Tensor a = self.expand(shape), b = other.expand(shape);
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t j = (i + 1) % 3, k = (i + 2) % 3;
      at::Tensor component = result.select(dim, i);
      at::sub_out(component, at::mul(a.select(dim, j), b.select(dim, k)),
                  at::mul(a.select(dim, k), b.select(dim, j)));
    }
    return out.finish(result);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<LinalgCross>(m, "linalg_cross", nullptr, "linalg_cross.out");
}

}  // namespace
}  // namespace accel
