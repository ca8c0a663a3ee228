// fill_ and zero_.
#include <ATen/TensorIterator.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/copy.h"

namespace accel {
namespace {

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  if (!kernelSupports(self.scalar_type()) || value.isComplex()) {
    static auto op = findOp("aten::fill_", "Scalar");
    fallbackCall<at::Tensor>(op, self, value);
    return self;
  }
  if (self.numel() == 0) return self;
  auto iter = at::TensorIteratorConfig()
                  .add_output(self)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  int device = self.device().index();
  ACCEL_RT_CHECK(
      kernels::copyTable().fill(makeDesc(iter), toKernelScalar(value), currentRuntimeStream(device)),
      device);
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  if (value.is_privateuseone() && value.device() == self.device()) {
    copyOnDevice(self, value);  // stays on the device: no synchronisation
    return self;
  }
  return fill_scalar(self, value.item());
}

at::Tensor& zero(at::Tensor& self) { return fill_scalar(self, 0); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero);
}

}  // namespace
}  // namespace accel
