// all / any and isposinf / isneginf, composed from native kernels (compare, then sum): the
// attention math path (_safe_softmax) and masking code call them every step, so they must not
// reach the fallback. Each is two or three launches instead of one fused kernel.
#include <ATen/native/Resize.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/sum.h>
#include <torch/library.h>

#include <limits>

namespace accel {
namespace {

// How many elements (over `dims`, all when empty) are nonzero / zero.
at::Tensor countNonzero(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  return at::sum(at::ne(self, 0), dims, keepdim, at::kLong);
}
at::Tensor countZero(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  return at::sum(at::eq(self, 0), dims, keepdim, at::kLong);
}

at::Tensor& writeTo(at::Tensor& out, const at::Tensor& result) {
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return at::eq(countZero(self, dim, keepdim), 0);
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return at::ne(countNonzero(self, dim, keepdim), 0);
}
at::Tensor all_full(const at::Tensor& self) { return all_dims(self, std::nullopt, false); }
at::Tensor any_full(const at::Tensor& self) { return any_dims(self, std::nullopt, false); }
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return all_dims(self, at::IntArrayRef{dim}, keepdim);
}
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return any_dims(self, at::IntArrayRef{dim}, keepdim);
}
at::Tensor& all_full_out(const at::Tensor& self, at::Tensor& out) {
  return writeTo(out, all_full(self));
}
at::Tensor& any_full_out(const at::Tensor& self, at::Tensor& out) {
  return writeTo(out, any_full(self));
}
at::Tensor& all_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  return writeTo(out, all_dim(self, dim, keepdim));
}
at::Tensor& any_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  return writeTo(out, any_dim(self, dim, keepdim));
}
at::Tensor& all_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                         at::Tensor& out) {
  return writeTo(out, all_dims(self, dim, keepdim));
}
at::Tensor& any_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                         at::Tensor& out) {
  return writeTo(out, any_dims(self, dim, keepdim));
}

// Integer and bool tensors hold no infinities.
template <bool Negative>
at::Tensor isinf_signed(const at::Tensor& self) {
  if (!c10::isFloatingType(self.scalar_type())) {
    return at::full(self.sizes(), false, self.options().dtype(at::kBool));
  }
  double inf = std::numeric_limits<double>::infinity();
  return at::eq(self, Negative ? -inf : inf);
}
template <bool Negative>
at::Tensor& isinf_signed_out(const at::Tensor& self, at::Tensor& out) {
  return writeTo(out, isinf_signed<Negative>(self));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("all", all_full);
  m.impl("all.all_out", all_full_out);
  m.impl("all.dim", all_dim);
  m.impl("all.out", all_dim_out);
  m.impl("all.dims", all_dims);
  m.impl("all.dims_out", all_dims_out);
  m.impl("any", any_full);
  m.impl("any.all_out", any_full_out);
  m.impl("any.dim", any_dim);
  m.impl("any.out", any_dim_out);
  m.impl("any.dims", any_dims);
  m.impl("any.dims_out", any_dims_out);
  m.impl("isposinf", isinf_signed<false>);
  m.impl("isposinf.out", isinf_signed_out<false>);
  m.impl("isneginf", isinf_signed<true>);
  m.impl("isneginf.out", isinf_signed_out<true>);
}

}  // namespace
}  // namespace accel
