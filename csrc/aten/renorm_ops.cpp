// renorm: each slice along `dim` whose p-norm exceeds maxnorm is scaled down to it. ATen's
// recipe on native ops: the norm over the other dims (in float for half and bfloat16), the
// factor maxnorm / (norm + 1e-7) where the norm exceeds maxnorm and 1 elsewhere, in the norm's
// dtype and then self's, and self times the factor. Complex input goes to the fallback.
#include <ATen/AccumulateType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/renorm_meta_dispatch.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/where.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

#include <vector>

#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;
using c10::Scalar;

struct Renorm {
  static bool native(const Tensor& self, const Scalar&, int64_t, const Scalar&) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm,
                        const Output& out) {
    // ATen's own meta function checks the arguments (CPU's messages), on a tensor of no data.
    at::meta::renorm(at::empty(self.sizes(), self.options().device(at::kMeta)), p, dim, maxnorm);
    dim = c10::maybe_wrap_dim(dim, self.dim());
    std::vector<int64_t> others;
    for (int64_t d = 0; d < self.dim(); ++d)
      if (d != dim) others.push_back(d);

    const at::ScalarType dtype = self.scalar_type();
    const at::ScalarType acc = at::toAccumulateType(dtype, /*is_cuda=*/true);
    const Tensor norm = at::linalg_vector_norm(self, p, others, /*keepdim=*/true, acc);
    // In the norm's dtype, as ATen's scale-factor kernel: eps and maxnorm rounded to it first.
    const Tensor limit = at::scalar_tensor(maxnorm, norm.options());
    const Tensor factor = at::where(norm > limit, limit / (norm + 1e-7), 1).to(dtype);
    Tensor target = out.allocate(self.sizes(), self.options(), Output::DTypeRule::Exact);
    return out.finish(at::mul_out(target, self, factor));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Renorm>(m, "renorm", "renorm_", "renorm.out");
}

}  // namespace
}  // namespace accel
