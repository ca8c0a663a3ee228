// multinomial without replacement (or one sample), composed of native accel ops: the
// categories with the largest p / E, E ~ Exp(1) drawn from the device generator, are a sample
// without replacement in proportion to p (the Gumbel top-k trick). With replacement, each
// draw u ~ U[0, 1) picks the first category whose cumulative weight, divided by the last
// (exactly 1 then), is above u: a zero weight adds nothing, so it is never picked. The
// distribution is checked
// on the host first (one synchronisation), for CPU's errors on negative, non-finite or
// all-zero weights; under graph capture the check is skipped, as CUDA checks on the device.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/searchsorted.h>
#include <torch/library.h>

#include <limits>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/graph.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"

namespace accel {
namespace {

using at::Tensor;

void checkDistribution(const Tensor& p) {
  if (isStreamCapturing(currentStream(p.device().index()))) return;
  SyncPointScope sync("aten::multinomial");  // CPU's errors need the weights on the host
  const bool valid =
      p.ge(0).logical_and(p.lt(std::numeric_limits<double>::infinity())).all().item<bool>();
  TORCH_CHECK(valid, "probability tensor contains either `inf`, `nan` or element < 0");
  TORCH_CHECK(!p.sum(-1).le(0).any().item<bool>(),
              "invalid multinomial distribution (sum of probabilities <= 0)");
}

struct Multinomial {
  static bool native(const Tensor& self, int64_t num_samples, bool replacement,
                     std::optional<at::Generator>) {
    return at::isFloatingType(self.scalar_type()) && kernelSupports(self.scalar_type());
  }
  static Tensor compute(const Tensor& self, int64_t num_samples, bool replacement,
                        std::optional<at::Generator> generator, const Output& out) {
    TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
    TORCH_CHECK(!out.isGiven() || out.tensor().scalar_type() == at::kLong,
                "multinomial expects Long tensor out, got: ", out.tensor().scalar_type());
    TORCH_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
    TORCH_CHECK(replacement || num_samples <= self.size(-1),
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    // CPU's limit (its sampler indexes categories in float).
    TORCH_CHECK(self.size(-1) <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
    const Tensor p = self.to(at::toOpMathType(self.scalar_type()));
    checkDistribution(p);
    c10::DimVector shape(self.sizes().begin(), self.sizes().end() - 1);
    shape.push_back(num_samples);
    Tensor result = out.allocate(shape, self.options().dtype(at::kLong), Output::DTypeRule::Exact);
    out.checkNoOverlap({self});
    if (replacement && num_samples > 1) {
      const Tensor cdf = p.cumsum(-1);
      const Tensor u = at::empty(shape, p.options()).uniform_(0, 1, generator);
      result.copy_(at::searchsorted(cdf / cdf.narrow(-1, p.size(-1) - 1, 1), u, false,
                                    /*right=*/true));
      return out.finish(result);
    }
    const Tensor u = at::empty_like(p).uniform_(0, 1, generator);
    const Tensor keys = p / -u.log();  // u == 0 gives key 0: never ahead of a positive weight
    result.copy_(std::get<1>(keys.topk(num_samples, -1)));
    return out.finish(result);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Multinomial>(m, "multinomial", nullptr, "multinomial.out");
}

}  // namespace
}  // namespace accel
