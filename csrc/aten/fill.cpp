// fill_ and zero_.
#include <ATen/TensorIterator.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/copy.h"

namespace accel {
namespace {

struct Fill {
  // A complex value fills complex tensors; into a real one CPU's cast rules apply (fallback).
  static bool native(at::Tensor& self, const c10::Scalar& value) {
    return kernelSupports(self.scalar_type()) ? !value.isComplex()
                                              : kernelSupportsComplex(self.scalar_type());
  }
  static at::Tensor& compute(at::Tensor& self, const c10::Scalar& value) {
    if (self.numel() == 0) return self;
    auto iter = at::TensorIteratorConfig()
                    .add_output(self)
                    .resize_outputs(false)
                    .check_all_same_dtype(false)
                    .build();
    int device = self.device().index();
    const kernels::Scalar v =
        self.is_complex() ? toKernelComplexScalar(value) : toKernelScalar(value);
    ACCEL_RT_CHECK(kernels::copyTable().fill(makeDesc(iter), v, currentRuntimeStream(device)),
                   device);
    return self;
  }
};

struct FillTensor {
  static bool native(at::Tensor& self, const at::Tensor& value) {
    return kernelSupports(self.scalar_type()) ? !value.is_complex()
                                              : kernelSupportsComplex(self.scalar_type());
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& value) {
    TORCH_CHECK(value.dim() == 0,
                "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
                " dimensions.");
    if (value.is_privateuseone() && value.device() == self.device()) {
      copyOnDevice(self, value);  // stays on the device: no synchronisation
      return self;
    }
    return Fill::compute(self, value.item());
  }
};

struct Zero {
  static bool native(at::Tensor& self) { return kernelKnows(self.scalar_type()); }
  static at::Tensor& compute(at::Tensor& self) { return Fill::compute(self, 0); }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<Fill>(m, "fill_.Scalar");
  registerNative<FillTensor>(m, "fill_.Tensor");
  registerNative<Zero>(m, "zero_");
}

}  // namespace
}  // namespace accel
