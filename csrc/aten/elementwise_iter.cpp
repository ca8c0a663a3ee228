#include "aten/elementwise_iter.h"

#include <ATen/ScalarOps.h>
#include <ATen/ops/full.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/native/Resize.h>

#include "aten/elementwise_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel {

bool isHostScalar(const at::Tensor& t) { return t.defined() && t.dim() == 0 && t.is_cpu(); }

at::Tensor wrappedScalar(const c10::Scalar& s) {
  at::Tensor t = at::scalar_tensor(s, at::device(at::kCPU).dtype(s.type()));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

at::Tensor asComputeInput(const at::Tensor& t, c10::ScalarType s, c10::Device device) {
  if (isHostScalar(t)) return at::full({}, t.item(), at::TensorOptions().dtype(s).device(device));
  return t.scalar_type() == s ? t : t.to(s);
}

c10::Device commonDevice(std::initializer_list<at::Tensor> ts, const char* op) {
  c10::optional<c10::Device> device;
  for (const at::Tensor& t : ts) {
    if (!t.defined() || isHostScalar(t)) continue;
    if (!device) {
      device = t.device();
      continue;
    }
    TORCH_CHECK(t.device() == *device,
                "Expected all tensors to be on the same device, but found at least two devices, ",
                *device, " and ", t.device(), "! (in method ", op, ")");
  }
  TORCH_CHECK(device && device->is_privateuseone(), op, ": expected an accel tensor argument");
  return *device;
}

at::Tensor runElementwise(const at::Tensor& out, c10::ScalarType out_dtype,
                          std::initializer_list<at::Tensor> inputs, const KernelLaunch& launch) {
  if (out.defined() && out.scalar_type() != out_dtype) {
    TORCH_CHECK(c10::canCast(out_dtype, out.scalar_type()), "result type ", out_dtype,
                " can't be cast to the desired output type ", out.scalar_type());
    at::Tensor tmp = runElementwise(at::Tensor(), out_dtype, inputs, launch);
    at::native::resize_output(out, tmp.sizes());
    out.copy_(tmp);
    return out;
  }
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true).check_all_same_dtype(false);
  config.add_output(out);
  if (!out.defined()) config.declare_static_dtype(out_dtype);
  for (const at::Tensor& t : inputs) config.add_const_input(t);
  auto iter = config.build();
  at::Tensor result = iter.output();
  if (result.numel() == 0) return result;
  const int device = result.device().index();
  ACCEL_RT_CHECK(launch(makeDesc(iter), currentRuntimeStream(device)), device);
  return result;
}

c10::ScalarType floatingOf(c10::ScalarType t) {
  return c10::isIntegralType(t, /*includeBool=*/true)
             ? c10::typeMetaToScalarType(c10::get_default_dtype())
             : t;
}

}  // namespace accel
