// _softmax, _log_softmax and their backward (forward's out= forms too). The kernels take a
// contiguous [outer, dim, inner] view; non-floating inputs go to the counted fallback (which
// raises CPU's error for them).
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/norm.h"

namespace accel {
namespace {

using at::Tensor;

bool nativeFloating(c10::ScalarType t) { return at::isFloatingType(t) && kernelSupports(t); }

// Sizes of the contiguous [outer, dim, inner] problem along `dim` (already wrapped).
void setShape(kernels::SoftmaxDesc& d, const Tensor& t, int64_t dim) {
  if (t.dim() == 0) return;
  for (int64_t k = 0; k < dim; ++k) d.outer *= t.size(k);
  d.dim = t.size(dim);
  for (int64_t k = dim + 1; k < t.dim(); ++k) d.inner *= t.size(k);
}

Tensor softmaxForward(const Tensor& self, int64_t dim, bool half_to_float, bool log) {
  TORCH_CHECK(!half_to_float, "softmax with half to float conversion is not supported on accel");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const Tensor in = self.contiguous();
  Tensor out = at::empty(in.sizes(), in.options());
  kernels::SoftmaxDesc d;
  d.in = static_cast<const char*>(in.const_data_ptr());
  d.out = static_cast<char*>(out.data_ptr());
  d.dtype = toKernelDType(in.scalar_type());
  d.log = log;
  setShape(d, in, dim);
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::normTable().softmax(d, currentRuntimeStream(device)), device);
  return out;
}

template <bool Log>
Tensor softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  if (!nativeFloating(self.scalar_type())) {
    static auto op = findOp(Log ? "aten::_log_softmax" : "aten::_softmax", "");
    return fallbackCall<Tensor>(op, self, dim, half_to_float);
  }
  return softmaxForward(self, dim, half_to_float, Log);
}

template <bool Log>
Tensor& softmax_out(const Tensor& self, int64_t dim, bool half_to_float, Tensor& out) {
  Tensor result = softmax<Log>(self, dim, half_to_float);
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

template <bool Log>
Tensor softmax_backward(const Tensor& grad_output, const Tensor& output, int64_t dim,
                        c10::ScalarType input_dtype) {
  if (!nativeFloating(grad_output.scalar_type()) || input_dtype != grad_output.scalar_type() ||
      output.scalar_type() != grad_output.scalar_type()) {
    static auto op = findOp(Log ? "aten::_log_softmax_backward_data" : "aten::_softmax_backward_data", "");
    return fallbackCall<Tensor>(op, grad_output, output, dim, input_dtype);
  }
  dim = c10::maybe_wrap_dim(dim, output.dim());
  const Tensor g = grad_output.contiguous(), y = output.contiguous();
  Tensor grad_input = at::empty(y.sizes(), y.options());
  kernels::SoftmaxDesc d;
  d.in = static_cast<const char*>(y.const_data_ptr());
  d.grad = static_cast<const char*>(g.const_data_ptr());
  d.out = static_cast<char*>(grad_input.data_ptr());
  d.dtype = toKernelDType(y.scalar_type());
  d.log = Log;
  setShape(d, y, dim);
  const int device = output.device().index();
  ACCEL_RT_CHECK(kernels::normTable().softmax_backward(d, currentRuntimeStream(device)), device);
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_softmax", softmax<false>);
  m.impl("_log_softmax", softmax<true>);
  m.impl("_softmax.out", softmax_out<false>);
  m.impl("_log_softmax.out", softmax_out<true>);
  m.impl("_softmax_backward_data", softmax_backward<false>);
  m.impl("_log_softmax_backward_data", softmax_backward<true>);
}

}  // namespace
}  // namespace accel
