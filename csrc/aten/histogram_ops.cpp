// Histograms: histc (every integer and float dtype, as on CUDA; CPU has no integer kernel)
// and bincount. Both read a range back to the host where their output depends on the data
// (histc with min == max, bincount's length), which synchronises like CUDA.
#include <ATen/Dispatch.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <cmath>

#include "aten/elementwise_desc.h"
#include "aten/index_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"
#include "kernels/index.h"

namespace accel {
namespace {

// ---- histc --------------------------------------------------------------------------------

struct Histc {
  // Bool has no histc on CUDA or CPU: the fallback raises CPU's error.
  static bool native(const at::Tensor& self, int64_t, const at::Scalar&, const at::Scalar&) {
    return kernelSupports(self.scalar_type()) && self.scalar_type() != at::kBool;
  }
  static at::Tensor compute(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                            const at::Scalar& max, const Output& out) {
    TORCH_CHECK(bins > 0, "torch.histc: bins must be > 0, but got ", bins, " for bins");
    TORCH_CHECK(self.dim() <= kernels::kMaxDims, "torch.histc: input has more than ",
                kernels::kMaxDims, " dimensions");
    // The range in the input's dtype, as CUDA takes it.
    double lo = 0, hi = 0;
    AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "histc", [&] {
      lo = static_cast<double>(min.to<scalar_t>());
      hi = static_cast<double>(max.to<scalar_t>());
    });
    TORCH_CHECK(!(lo > hi), "torch.histc: max must be larger than min");
    if (lo == hi && self.numel() > 0) {
      SyncPointScope sync("aten::histc");  // the data's range sets the bins
      lo = self.min().item<double>();
      hi = self.max().item<double>();
    }
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi,
                "] is not finite");
    TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
    at::Tensor result =
        out.allocate({bins}, self.options(), Output::DTypeRule::Exact, /*contiguous=*/true);
    out.checkNoOverlap({self});
    result.zero_();
    const int device = self.device().index();
    ACCEL_RT_CHECK(kernels::indexTable().histc(rowMajorDesc(self), lo, hi, bins,
                                               static_cast<char*>(result.data_ptr()),
                                               currentRuntimeStream(device)),
                   device);
    return out.finish(result);
  }
};

// ---- bincount -----------------------------------------------------------------------------

// The result's dtype: int64 counts, or sums of weights in float (float weights) or double.
at::ScalarType bincountDType(const std::optional<at::Tensor>& weights) {
  if (!weights.has_value() || !weights->defined()) return at::kLong;
  return weights->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
}

struct Bincount {
  static bool native(const at::Tensor& self, const std::optional<at::Tensor>& weights,
                     c10::SymInt) {
    // Other dtypes have no bincount on CUDA or CPU: the fallback raises CPU's error.
    const bool weights_ok =
        !weights.has_value() || !weights->defined() || kernelSupports(weights->scalar_type());
    return at::isIntegralType(self.scalar_type(), /*includeBool=*/false) &&
           kernelSupports(self.scalar_type()) && weights_ok;
  }
  static at::Tensor compute(const at::Tensor& self, const std::optional<at::Tensor>& weights,
                            c10::SymInt sym_minlength) {
    const int64_t minlength = sym_minlength.guard_int(__FILE__, __LINE__);
    TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
    const at::TensorOptions options = self.options().dtype(bincountDType(weights));
    if (self.dim() == 1 && self.numel() == 0) return at::zeros({minlength}, options);
    TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
    const bool weighted = weights.has_value() && weights->defined();
    if (weighted) {
      TORCH_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                  "weights should be 1-d and have the same length as input");
      TORCH_CHECK(weights->device() == self.device(), "bincount: weights on ", weights->device(),
                  " but input on ", self.device());
    }
    const at::Tensor values = self.to(at::kLong);
    SyncPointScope sync("aten::bincount");  // the result's length is the largest value + 1
    const auto [lowest, highest] = indexRange(values);
    TORCH_CHECK(lowest >= 0, "bincount only supports 1-d non-negative integral inputs.");
    const int64_t size = std::max(minlength, highest + 1);
    at::Tensor result = at::zeros({size}, options);
    kernels::ElementwiseDesc d = rowMajorDesc(values);
    if (weighted) {
      d.noperands = 2;
      d.op[1].data = static_cast<char*>(weights->data_ptr());
      d.op[1].dtype = toKernelDType(weights->scalar_type());
      d.op[1].strides[0] = weights->stride(0) * weights->element_size();
    }
    const int device = self.device().index();
    ACCEL_RT_CHECK(kernels::indexTable().bincount(d, static_cast<char*>(result.data_ptr()),
                                                  toKernelDType(result.scalar_type()), size,
                                                  currentRuntimeStream(device)),
                   device);
    return result;
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Histc>(m, "histc", nullptr, "histc.out");
  registerNative<Bincount>(m, "bincount");
}

}  // namespace
}  // namespace accel
