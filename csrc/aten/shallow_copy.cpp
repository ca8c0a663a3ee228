// Whether one tensor may take another's data in place (`param.data = t`). Module._apply asks
// this to decide between swapping a Parameter's data and replacing the Parameter: answering
// "no" for CPU <-> accel would untie shared parameters on `model.to("accel")`. c10's own rule
// lists CPU and CUDA but no PrivateUse1 (c10/core/TensorImpl.h says to override this op).
#include <ATen/core/Tensor.h>
#include <torch/library.h>

namespace accel {
namespace {

bool denseCpuOrAccel(c10::DispatchKeySet ks) {
  constexpr auto backends =
      c10::DispatchKeySet({c10::BackendComponent::CPUBit, c10::BackendComponent::PrivateUse1Bit});
  return ks.has_any(c10::DispatchKeySet(c10::DispatchKey::Dense)) && ks.has_any(backends);
}

bool hasCompatibleShallowCopyType(const at::Tensor& self, const at::Tensor& from) {
  if (denseCpuOrAccel(self.key_set()) && denseCpuOrAccel(from.key_set())) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", hasCompatibleShallowCopyType);
}

}  // namespace
}  // namespace accel
