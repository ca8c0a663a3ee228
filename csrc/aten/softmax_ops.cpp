// _softmax, _log_softmax and their backward (forward's out= forms too), and _safe_softmax (the
// attention math path's). The kernels take a contiguous [outer, dim, inner] view; non-floating
// inputs go to the counted fallback (which raises CPU's error for them).
#include <ATen/native/Resize.h>
#include <ATen/ops/_safe_softmax_native.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/copy.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/norm.h"

namespace accel {
namespace {

using at::Tensor;

bool nativeFloating(c10::ScalarType t) { return at::isFloatingType(t) && kernelSupports(t); }

// The descriptor of the contiguous [outer, dim, inner] problem along `dim` (already wrapped):
// `in` is the forward's input (or, for the backward, its output), written to `out`.
kernels::SoftmaxDesc softmaxDesc(const Tensor& in, const Tensor& out, int64_t dim, bool log) {
  kernels::SoftmaxDesc d;
  d.in = static_cast<const char*>(in.const_data_ptr());
  d.out = static_cast<char*>(out.data_ptr());
  d.dtype = toKernelDType(in.scalar_type());
  d.log = log;
  if (in.dim() == 0) return d;
  for (int64_t k = 0; k < dim; ++k) d.outer *= in.size(k);
  d.dim = in.size(dim);
  for (int64_t k = dim + 1; k < in.dim(); ++k) d.inner *= in.size(k);
  return d;
}

Tensor softmaxForward(const Tensor& self, int64_t dim, bool half_to_float, bool log,
                      bool safe = false) {
  TORCH_CHECK(!half_to_float, "softmax with half to float conversion is not supported on accel");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const Tensor in = self.contiguous();
  Tensor out = at::empty(in.sizes(), in.options());
  kernels::SoftmaxDesc d = softmaxDesc(in, out, dim, log);
  d.safe = safe;
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::normTable().softmax(d, currentRuntimeStream(device)), device);
  return out;
}

template <bool Log>
struct Softmax {
  static bool native(const Tensor& self, int64_t, bool) {
    return nativeFloating(self.scalar_type());
  }
  static Tensor compute(const Tensor& self, int64_t dim, bool half_to_float, const Output& out) {
    Tensor result = softmaxForward(self, dim, half_to_float, Log);
    if (!out.isGiven()) return result;
    Tensor target = out.allocate(result.sizes(), result.options(), Output::DTypeRule::Exact);
    copyOnDevice(target, result);
    return out.finish(target);
  }
};

// softmax, with zeros where a line is all -inf (a fully masked attention row) instead of NaN:
// one kernel where the composite takes four (eq, all, where after the softmax). Its gradient is
// the softmax's (autograd's SafeSoftmaxBackward0).
Tensor safeSoftmax(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  const Tensor in = dtype.has_value() ? self.to(*dtype) : self;
  if (!nativeFloating(in.scalar_type())) return at::native::_safe_softmax(self, dim, dtype);
  return softmaxForward(in, dim, false, false, /*safe=*/true);
}

template <bool Log>
struct SoftmaxBackward {
  static bool native(const Tensor& grad_output, const Tensor& output, int64_t,
                     c10::ScalarType input_dtype) {
    return nativeFloating(grad_output.scalar_type()) && input_dtype == grad_output.scalar_type() &&
           output.scalar_type() == grad_output.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& output, int64_t dim,
                        c10::ScalarType input_dtype, const Output& out) {
    dim = c10::maybe_wrap_dim(dim, output.dim());
    const Tensor g = grad_output.contiguous(), y = output.contiguous();
    Tensor grad_input = out.allocate(y.sizes(), y.options(), Output::DTypeRule::Exact,
                                     /*contiguous=*/true);
    out.checkNoOverlap({grad_output, output});
    kernels::SoftmaxDesc d = softmaxDesc(y, grad_input, dim, Log);
    d.grad = static_cast<const char*>(g.const_data_ptr());
    const int device = output.device().index();
    ACCEL_RT_CHECK(kernels::normTable().softmax_backward(d, currentRuntimeStream(device)), device);
    return out.finish(grad_input);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Softmax<false>>(m, "_softmax", nullptr, "_softmax.out");
  registerForms<Softmax<true>>(m, "_log_softmax", nullptr, "_log_softmax.out");
  m.impl("_safe_softmax", TORCH_FN(safeSoftmax));
  registerForms<SoftmaxBackward<false>>(m, "_softmax_backward_data", nullptr,
                                        "_softmax_backward_data.out");
  registerForms<SoftmaxBackward<true>>(m, "_log_softmax_backward_data", nullptr,
                                       "_log_softmax_backward_data.out");
}

}  // namespace
}  // namespace accel
