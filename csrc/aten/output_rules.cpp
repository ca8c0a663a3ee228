#include "aten/output_rules.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

namespace accel {
namespace {
const at::Tensor kUndefined;
}  // namespace

const at::Tensor& Output::tensor() const { return given_ ? *given_ : kUndefined; }

at::Tensor Output::allocate(c10::IntArrayRef sizes, const at::TensorOptions& options,
                            DTypeRule rule, bool contiguous) const {
  if (!given_) return at::empty(sizes, options);
  at::Tensor& t = *given_;
  const c10::ScalarType result = c10::typeMetaToScalarType(options.dtype());
  if (form_ == Form::InPlace) {
    TORCH_CHECK(t.sizes().equals(sizes), "Bad in-place call: input tensor size ", t.sizes(),
                " and output tensor size ", sizes, " should match");
  } else {
    TORCH_CHECK(t.device() == options.device(), "Expected out tensor to have device ",
                options.device(), ", but got ", t.device(), " instead");
    at::native::resize_output(t, sizes);
  }
  if (rule == DTypeRule::Exact) {
    // The structured ops' wording, dtypes as TypeMeta names ("float", "long int").
    TORCH_CHECK(t.scalar_type() == result, "Expected out tensor to have dtype ",
                c10::scalarTypeToTypeMeta(result), ", but got ", t.dtype(), " instead");
  } else {
    TORCH_CHECK(c10::canCast(result, t.scalar_type()), "result type ", result,
                " can't be cast to the desired output type ", t.scalar_type());
  }
  if (t.scalar_type() == result && (!contiguous || t.is_contiguous())) return t;
  return at::empty(sizes, options);
}

at::Tensor Output::finish(const at::Tensor& computed) const {
  if (!given_ || computed.is_same(*given_)) return computed;
  given_->copy_(computed);
  return *given_;
}

void Output::checkNoOverlap(std::initializer_list<at::TensorBase> inputs) const {
  if (!given_) return;
  at::assert_no_internal_overlap(*given_);
  for (const at::TensorBase& input : inputs)
    if (input.defined()) at::assert_no_overlap(*given_, input);
}

// TensorIterator's message, the one CUDA users see for most ops.
void checkOutDevice(const at::Tensor& out, const std::optional<c10::Device>& device) {
  const bool ok = out.is_privateuseone() && (!device || out.device() == *device);
  TORCH_CHECK(ok,
              "Expected all tensors to be on the same device, but found at least two "
              "devices, ",
              device ? *device : c10::Device(c10::DeviceType::PrivateUse1), " and ", out.device(),
              "! (when checking the out= argument)");
}

void checkInPlaceDevice(const at::Tensor& self, const std::optional<c10::Device>& device) {
  const bool ok = self.is_privateuseone() && (!device || self.device() == *device);
  TORCH_CHECK(ok,
              "Expected all tensors to be on the same device, but found at least two "
              "devices, ",
              device ? *device : self.device(), " and ", self.device(), "!");
}

}  // namespace accel
