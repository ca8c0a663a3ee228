// all / any (the extreme of a bool tensor), count_nonzero (compare, then sum) and isposinf /
// isneginf, composed from native kernels: masking code and generation's stopping checks call
// them every step, so they must not reach the fallback.
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/sum.h>
#include <torch/library.h>

#include <limits>

#include "aten/op_forms.h"

namespace accel {
namespace {

// How many elements (over `dims`, all when empty) are nonzero / zero.
at::Tensor countNonzero(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  return at::sum(at::ne(self, 0), dims, keepdim, at::kLong);
}
at::Tensor countZero(const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  return at::sum(at::eq(self, 0), dims, keepdim, at::kLong);
}

// Elements each output reduces: all of them without dims.
int64_t reducedExtent(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  if (!dim) return self.numel();
  int64_t extent = 1;
  for (const int64_t d : *dim)
    extent *= self.dim() == 0 ? 1 : self.size(c10::maybe_wrap_dim(d, self.dim()));
  return extent;
}

// any is the max of (self != 0) and all its min: one reduction launch over a bool tensor, the
// comparison first for other dtypes. As on CPU, an empty dim list reduces nothing, an empty
// reduction (which amax refuses) gives any's false and all's true, and uint8 stays uint8.
at::Tensor logical(bool any, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  at::Tensor result;
  if (dim && dim->empty()) {
    result = at::ne(self, 0);
  } else if (reducedExtent(self, dim) == 0) {
    result = any ? at::ne(countNonzero(self, dim, keepdim), 0)
                 : at::eq(countZero(self, dim, keepdim), 0);
  } else {
    const at::Tensor truth = self.scalar_type() == at::kBool ? self : at::ne(self, 0);
    const at::IntArrayRef dims = dim ? *dim : at::IntArrayRef{};
    result = any ? at::amax(truth, dims, keepdim) : at::amin(truth, dims, keepdim);
  }
  return self.scalar_type() == at::kByte ? result.to(at::kByte) : result;
}

// The composites are native whenever their parts are (the comparison sends a dtype it does not
// take to the fallback).
template <bool Any>
struct Full {
  static bool native(const at::Tensor&) { return true; }
  static at::Tensor compute(const at::Tensor& self, const Output& out) {
    return into(out, logical(Any, self, std::nullopt, false));
  }
};
template <bool Any>
struct OverDim {
  static bool native(const at::Tensor&, int64_t, bool) { return true; }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, bool keepdim, const Output& out) {
    return into(out, logical(Any, self, at::IntArrayRef{dim}, keepdim));
  }
};
template <bool Any>
struct OverDims {
  static bool native(const at::Tensor&, at::OptionalIntArrayRef, bool) { return true; }
  static at::Tensor compute(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                            const Output& out) {
    return into(out, logical(Any, self, dim, keepdim));
  }
};

// count_nonzero over `dim` (all dims when empty), as CUDA computes it: (self != 0).sum(dim).
struct CountNonzero {
  static bool native(const at::Tensor&, at::IntArrayRef) { return true; }
  static at::Tensor compute(const at::Tensor& self, at::IntArrayRef dim) {
    return countNonzero(self, dim, false);
  }
};

// Integer and bool tensors hold no infinities.
template <bool Negative>
struct IsInfSigned {
  static bool native(const at::Tensor&) { return true; }
  static at::Tensor compute(const at::Tensor& self, const Output& out) {
    TORCH_CHECK(!self.is_complex(), Negative ? "isneginf" : "isposinf",
                " does not support complex inputs.");
    if (!c10::isFloatingType(self.scalar_type())) {
      return into(out, at::full(self.sizes(), false, self.options().dtype(at::kBool)));
    }
    const double inf = std::numeric_limits<double>::infinity();
    return into(out, at::eq(self, Negative ? -inf : inf));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Full<false>>(m, "all", nullptr, "all.all_out");
  registerForms<OverDim<false>>(m, "all.dim", nullptr, "all.out");
  registerForms<OverDims<false>>(m, "all.dims", nullptr, "all.dims_out");
  registerForms<Full<true>>(m, "any", nullptr, "any.all_out");
  registerForms<OverDim<true>>(m, "any.dim", nullptr, "any.out");
  registerForms<OverDims<true>>(m, "any.dims", nullptr, "any.dims_out");
  registerNative<CountNonzero>(m, "count_nonzero.dim_IntList");
  registerForms<IsInfSigned<false>>(m, "isposinf", nullptr, "isposinf.out");
  registerForms<IsInfSigned<true>>(m, "isneginf", nullptr, "isneginf.out");
}

}  // namespace
}  // namespace accel
