// Reductions: sum, mean, prod, amax/amin, max/min (full and with indices), argmax/argmin,
// var/std (+ _mean), linalg_vector_norm, _foreach_norm, cumsum. Output shapes and dtypes come
// from ATen's reduction helpers (make_dim_mask, shape_from_dim_mask, get_dtype_from_self);
// the kernel gets the input's kept and reduced dimensions as sizes and byte strides.
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/reduce.h"

namespace accel {
namespace {

using at::Tensor;
using at::native::DimMask;
using kernels::ReduceOp;

// Appends a dimension to a list kept innermost first, merging it into the previous one when
// every stride continues it (so the linear index over the list is unchanged).
struct DimList {
  int n = 0;
  int64_t sizes[kernels::kMaxDims];
  int64_t strides[3][kernels::kMaxDims];
  void add(int64_t size, const int64_t (&s)[3], int nstrides) {
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < nstrides; ++k)
        merge = merge && s[k] == strides[k][n - 1] * sizes[n - 1];
      if (merge) {
        sizes[n - 1] *= size;
        return;
      }
    }
    sizes[n] = size;
    for (int k = 0; k < 3; ++k) strides[k][n] = s[k];
    ++n;
  }
};

// Reduces `self` over `mask` into out0/out1 (final shapes; either may be undefined).
void launchReduce(ReduceOp op, const Tensor& self, const DimMask& mask, bool keepdim,
                  const Tensor& out0, const Tensor& out1, kernels::ReduceParams params = {}) {
  const int ndim = self.dim();
  const Tensor& some_out = out0.defined() ? out0 : out1;
  if (some_out.numel() == 0) return;
  Tensor keep[2];
  const Tensor* outs[2] = {&out0, &out1};
  for (int k = 0; k < 2; ++k)
    if (outs[k]->defined()) keep[k] = at::native::review_reduce_result(*outs[k], ndim, mask, keepdim);

  kernels::ReduceDesc d;
  d.in = static_cast<const char*>(self.const_data_ptr());
  d.in_dtype = toKernelDType(self.scalar_type());
  DimList kept, red;
  const int64_t es = self.element_size();
  for (int dim = ndim - 1; dim >= 0; --dim) {
    const int64_t size = self.size(dim);
    if (size == 1) continue;
    if (mask[dim]) {
      const int64_t s[3] = {self.stride(dim) * es, 0, 0};
      red.add(size, s, 1);
      d.red_numel *= size;
    } else {
      int64_t s[3] = {self.stride(dim) * es, 0, 0};
      for (int k = 0; k < 2; ++k)
        if (keep[k].defined()) s[k + 1] = keep[k].stride(dim) * keep[k].element_size();
      kept.add(size, s, 3);
      d.out_numel *= size;
    }
  }
  d.out_ndim = kept.n;
  d.red_ndim = red.n;
  for (int i = 0; i < kept.n; ++i) {
    d.out_sizes[i] = kept.sizes[i];
    d.in_out_strides[i] = kept.strides[0][i];
    d.out_strides[0][i] = kept.strides[1][i];
    d.out_strides[1][i] = kept.strides[2][i];
  }
  for (int i = 0; i < red.n; ++i) {
    d.red_sizes[i] = red.sizes[i];
    d.in_red_strides[i] = red.strides[0][i];
  }
  for (int k = 0; k < 2; ++k) {
    if (!keep[k].defined()) continue;
    TORCH_CHECK(keep[k].is_privateuseone(), "Expected all tensors to be on the same device, but "
                "found at least two devices, ", keep[k].device(), " and ", self.device(), "!");
    d.out[k] = static_cast<char*>(keep[k].data_ptr());
    d.out_dtype[k] = toKernelDType(keep[k].scalar_type());
  }
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::reduceTable().reduce(op, d, params, currentRuntimeStream(device)), device);
}

int64_t reducedNumel(const Tensor& self, const DimMask& mask) {
  int64_t n = 1;
  for (int dim = 0; dim < self.dim(); ++dim)
    if (mask[dim]) n *= self.size(dim);
  return n;
}

Tensor emptyResult(const Tensor& self, const DimMask& mask, bool keepdim, c10::ScalarType dtype) {
  return at::empty(at::native::shape_from_dim_mask(self, mask, keepdim),
                   self.options().dtype(dtype));
}

void resizeResult(const Tensor& out, const Tensor& self, const DimMask& mask, bool keepdim) {
  at::native::resize_output(out, at::native::shape_from_dim_mask(self, mask, keepdim));
}

bool native(const Tensor& self, c10::ScalarType out_dtype) {
  return kernelSupports(self.scalar_type()) && kernelSupports(out_dtype);
}

template <class... Args>
Tensor fallback(const char* name, const char* overload, Args&&... args) {
  return fallbackCall<Tensor>(findOp(name, overload), std::forward<Args>(args)...);
}

// --- sum, mean, prod ------------------------------------------------------------------------

Tensor& sum_out(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                std::optional<c10::ScalarType> dtype, Tensor& out) {
  const c10::ScalarType out_dtype = dtype ? *dtype : out.scalar_type();
  if (!native(self, out_dtype)) {
    fallback("aten::sum", "IntList_out", self, dim, keepdim, dtype, out);
    return out;
  }
  TORCH_CHECK(out.scalar_type() == out_dtype, "Expected out tensor to have dtype ", out_dtype,
              ", but got ", out.scalar_type(), " instead");
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  resizeResult(out, self, mask, keepdim);
  launchReduce(ReduceOp::Sum, self, mask, keepdim, out, {});
  return out;
}

Tensor sum_dim(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
               std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType out_dtype = at::native::get_dtype_from_self(self, dtype, true);
  if (!native(self, out_dtype)) return fallback("aten::sum", "dim_IntList", self, dim, keepdim, dtype);
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  Tensor out = emptyResult(self, mask, keepdim, out_dtype);
  launchReduce(ReduceOp::Sum, self, mask, keepdim, out, {});
  return out;
}

Tensor sum_full(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sum_dim(self, std::nullopt, false, dtype);
}

Tensor& mean_out(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                 std::optional<c10::ScalarType> dtype, Tensor& out) {
  const c10::ScalarType out_dtype = dtype ? *dtype : out.scalar_type();
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()) ||
                  dtype.has_value(),
              "mean(): could not infer output dtype. Input dtype must be either a floating "
              "point or complex dtype. Got: ", self.scalar_type());
  TORCH_CHECK(at::isFloatingType(out_dtype) || at::isComplexType(out_dtype),
              "mean(): could not infer output dtype. Optional dtype must be either a floating "
              "point or complex dtype. Got: ", out_dtype);
  if (!native(self, out_dtype)) {
    fallback("aten::mean", "out", self, dim, keepdim, dtype, out);
    return out;
  }
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  resizeResult(out, self, mask, keepdim);
  kernels::ReduceParams p;
  p.factor = 1.0 / static_cast<double>(reducedNumel(self, mask));
  launchReduce(ReduceOp::Sum, self, mask, keepdim, out, {}, p);
  return out;
}

Tensor mean_dim(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType out_dtype = dtype ? *dtype : self.scalar_type();
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  Tensor out = emptyResult(self, mask, keepdim, out_dtype);
  return mean_out(self, dim, keepdim, dtype, out);
}

Tensor mean_full(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  return mean_dim(self, std::nullopt, false, dtype);
}

Tensor prod_dim(const Tensor& self, int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType out_dtype = at::native::get_dtype_from_self(self, dtype, true);
  if (!native(self, out_dtype)) return fallback("aten::prod", "dim_int", self, dim, keepdim, dtype);
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  Tensor out = emptyResult(self, mask, keepdim, out_dtype);
  launchReduce(ReduceOp::Prod, self, mask, keepdim, out, {});
  return out;
}

Tensor prod_full(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType out_dtype = at::native::get_dtype_from_self(self, dtype, true);
  if (!native(self, out_dtype)) return fallback("aten::prod", "", self, dtype);
  const DimMask mask = at::native::make_dim_mask(std::nullopt, self.dim());
  Tensor out = emptyResult(self, mask, false, out_dtype);
  launchReduce(ReduceOp::Prod, self, mask, false, out, {});
  return out;
}

// --- max / min family -----------------------------------------------------------------------

void checkNonEmpty(const Tensor& self, at::IntArrayRef dims, const char* name) {
  if (self.numel() == 0) at::native::zero_numel_check_dims(self, dims, name);
}

Tensor& extreme_out(ReduceOp op, const char* name, const Tensor& self, at::IntArrayRef dim,
                    bool keepdim, Tensor& out) {
  checkNonEmpty(self, dim, name);
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "Expected the dtype for input and out to match, but got ",
              self.scalar_type(), " for input's dtype and ", out.scalar_type(), " for out's dtype.");
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  resizeResult(out, self, mask, keepdim);
  launchReduce(op, self, mask, keepdim, out, {});
  return out;
}

template <ReduceOp Op>
Tensor amax(const Tensor& self, at::IntArrayRef dim, bool keepdim) {
  const char* name = Op == ReduceOp::Max ? "amax" : "amin";
  if (!native(self, self.scalar_type())) return fallback(Op == ReduceOp::Max ? "aten::amax" : "aten::amin", "", self, dim, keepdim);
  Tensor out = at::empty({0}, self.options());
  return extreme_out(Op, name, self, dim, keepdim, out);
}

template <ReduceOp Op>
Tensor& amax_out(const Tensor& self, at::IntArrayRef dim, bool keepdim, Tensor& out) {
  return extreme_out(Op, Op == ReduceOp::Max ? "amax" : "amin", self, dim, keepdim, out);
}

template <ReduceOp Op>
Tensor max_full(const Tensor& self) {
  const char* name = Op == ReduceOp::Max ? "max" : "min";
  if (!native(self, self.scalar_type())) return fallback(Op == ReduceOp::Max ? "aten::max" : "aten::min", "", self);
  TORCH_CHECK(self.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0. "
              "Specify the reduction dim with the 'dim' argument.");
  Tensor out = at::empty({}, self.options());
  launchReduce(Op, self, at::native::make_dim_mask(std::nullopt, self.dim()), false, out, {});
  return out;
}

template <ReduceOp Op>
std::tuple<Tensor&, Tensor&> max_dim_out(const Tensor& self, int64_t dim, bool keepdim,
                                         Tensor& values, Tensor& indices) {
  const char* name = Op == ReduceOp::Max ? "max" : "min";
  TORCH_CHECK(kernelSupports(self.scalar_type()), name, ": unsupported dtype ", self.scalar_type());
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0) at::native::zero_numel_check_dims(self, dim, name);
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "expected scalar_type ", self.scalar_type(),
              " but found ", values.scalar_type());
  TORCH_CHECK(indices.scalar_type() == at::kLong, "expected indices to have dtype Long");
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  resizeResult(values, self, mask, keepdim);
  resizeResult(indices, self, mask, keepdim);
  launchReduce(Op, self, mask, keepdim, values, indices);
  return {values, indices};
}

template <ReduceOp Op>
std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  Tensor values = at::empty({0}, self.options());
  Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  max_dim_out<Op>(self, dim, keepdim, values, indices);
  return {values, indices};
}

template <ReduceOp Op>
Tensor& argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  const char* name = Op == ReduceOp::Max ? "argmax" : "argmin";
  TORCH_CHECK(kernelSupports(self.scalar_type()), name, ": unsupported dtype ", self.scalar_type());
  TORCH_CHECK(self.scalar_type() != at::kBool, name, "(): does not support bool input");
  TORCH_CHECK(out.scalar_type() == at::kLong, "Expected out tensor to have dtype Long");
  DimMask mask;
  if (dim) {
    const int64_t d = c10::maybe_wrap_dim(*dim, self.dim());
    if (self.numel() == 0) at::native::zero_numel_check_dims(self, d, name);
    mask = at::native::make_dim_mask(d, self.dim());
  } else {
    TORCH_CHECK_INDEX(self.numel() != 0, name,
                      "(): Expected reduction dim to be specified for input.numel() == 0.");
    mask = at::native::make_dim_mask(std::nullopt, self.dim());
  }
  resizeResult(out, self, mask, keepdim);
  launchReduce(Op, self, mask, keepdim, {}, out);
  return out;
}

template <ReduceOp Op>
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return argmax_out<Op>(self, dim, keepdim, out);
}

// --- var / std ------------------------------------------------------------------------------

c10::ScalarType checkVarInput(const Tensor& self, const char* name) {
  const c10::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
              name, "(): input tensor should be of floating point or complex dtype. Got ", t, " instead.");
  TORCH_CHECK(kernelSupports(t), name, ": unsupported dtype ", t);
  return t;
}

kernels::ReduceParams varParams(const std::optional<c10::Scalar>& correction, bool take_sqrt) {
  kernels::ReduceParams p;
  p.correction = correction ? correction->toDouble() : 1.0;
  p.take_sqrt = take_sqrt;
  return p;
}

template <bool Std>
Tensor var(const Tensor& self, at::OptionalIntArrayRef dim,
           const std::optional<c10::Scalar>& correction, bool keepdim) {
  const c10::ScalarType t = checkVarInput(self, Std ? "std" : "var");
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  Tensor out = emptyResult(self, mask, keepdim, t);
  launchReduce(ReduceOp::Var, self, mask, keepdim, out, {}, varParams(correction, Std));
  return out;
}

template <bool Std>
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, at::OptionalIntArrayRef dim,
                                    const std::optional<c10::Scalar>& correction, bool keepdim) {
  const c10::ScalarType t = checkVarInput(self, Std ? "std_mean" : "var_mean");
  const DimMask mask = at::native::make_dim_mask(dim, self.dim());
  Tensor out = emptyResult(self, mask, keepdim, t);
  Tensor mean = emptyResult(self, mask, keepdim, t);
  launchReduce(ReduceOp::Var, self, mask, keepdim, out, mean, varParams(correction, Std));
  return {out, mean};
}

// --- norms ----------------------------------------------------------------------------------

Tensor& vector_norm_out(const Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                        bool keepdim, std::optional<c10::ScalarType> dtype, Tensor& out) {
  const c10::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ", t);
  const c10::ScalarType out_dtype = dtype ? *dtype : out.scalar_type();
  if (!native(self, out_dtype)) {
    fallback("aten::linalg_vector_norm", "out", self, ord, dim, keepdim, dtype, out);
    return out;
  }
  const double p = ord.toDouble();
  const DimMask mask = at::native::make_dim_mask(dim, self.dim(), /*allow_empty_dims=*/true);
  if (self.numel() == 0 && p < 0) {
    TORCH_CHECK(false, "linalg.vector_norm cannot compute the ", p,
                " norm on an empty tensor because the operation does not have an identity");
  }
  resizeResult(out, self, mask, keepdim);
  kernels::ReduceParams params;
  params.p = p;
  launchReduce(ReduceOp::Norm, self, mask, keepdim, out, {}, params);
  return out;
}

Tensor vectorNorm(const Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                   bool keepdim, std::optional<c10::ScalarType> dtype) {
  if (!kernelSupports(self.scalar_type()))
    return fallback("aten::linalg_vector_norm", "", self, ord, dim, keepdim, dtype);
  Tensor out = at::empty({0}, self.options().dtype(dtype ? *dtype : self.scalar_type()));
  return vector_norm_out(self, ord, dim, keepdim, dtype, out);
}

std::vector<Tensor> foreach_norm(at::TensorList tensors, const c10::Scalar& ord,
                                 std::optional<c10::ScalarType> dtype) {
  std::vector<Tensor> result;
  result.reserve(tensors.size());
  for (const Tensor& t : tensors) result.push_back(vectorNorm(t, ord, std::nullopt, false, dtype));
  return result;
}

// --- cumsum ---------------------------------------------------------------------------------

// Scans `self` along `dim` into a new contiguous tensor of dtype `out_dtype`.
Tensor cumsumInto(const Tensor& self, int64_t dim, c10::ScalarType out_dtype) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const Tensor in = self.contiguous();
  Tensor out = at::empty(self.sizes(), self.options().dtype(out_dtype));
  if (out.numel() == 0) return out;
  kernels::ScanDesc d;
  d.in = static_cast<const char*>(in.const_data_ptr());
  d.in_dtype = toKernelDType(in.scalar_type());
  d.out = static_cast<char*>(out.data_ptr());
  d.out_dtype = toKernelDType(out_dtype);
  if (self.dim() > 0) {
    for (int64_t k = 0; k < dim; ++k) d.outer *= self.size(k);
    d.n = self.size(dim);
    for (int64_t k = dim + 1; k < self.dim(); ++k) d.inner *= self.size(k);
  }
  const int device = self.device().index();
  ACCEL_RT_CHECK(kernels::reduceTable().cumsum(d, currentRuntimeStream(device)), device);
  return out;
}

Tensor cumsumFn(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType out_dtype = at::native::get_dtype_from_self(self, dtype, true);
  if (!native(self, out_dtype)) return fallback("aten::cumsum", "", self, dim, dtype);
  return cumsumInto(self, dim, out_dtype);
}

Tensor& cumsumInplace(Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(!dtype || *dtype == self.scalar_type(),
              "provided dtype must match the dtype of self tensor in cumsum. Got ", *dtype,
              " and ", self.scalar_type(), ".");
  self.copy_(cumsumFn(self, dim, self.scalar_type()));
  return self;
}

Tensor& cumsum_out(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype,
                   Tensor& out) {
  const c10::ScalarType out_dtype = dtype ? *dtype : out.scalar_type();
  Tensor result = cumsumFn(self, dim, out_dtype);
  at::native::resize_output(out, self.sizes());
  out.copy_(result);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum", sum_full);
  m.impl("sum.dim_IntList", sum_dim);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean", mean_full);
  m.impl("mean.dim", mean_dim);
  m.impl("mean.out", mean_out);
  m.impl("prod", prod_full);
  m.impl("prod.dim_int", prod_dim);
  m.impl("amax", amax<ReduceOp::Max>);
  m.impl("amax.out", amax_out<ReduceOp::Max>);
  m.impl("amin", amax<ReduceOp::Min>);
  m.impl("amin.out", amax_out<ReduceOp::Min>);
  m.impl("max", max_full<ReduceOp::Max>);
  m.impl("min", max_full<ReduceOp::Min>);
  m.impl("max.dim", max_dim<ReduceOp::Max>);
  m.impl("min.dim", max_dim<ReduceOp::Min>);
  m.impl("max.dim_max", max_dim_out<ReduceOp::Max>);
  m.impl("min.dim_min", max_dim_out<ReduceOp::Min>);
  m.impl("argmax", argmax<ReduceOp::Max>);
  m.impl("argmin", argmax<ReduceOp::Min>);
  m.impl("argmax.out", argmax_out<ReduceOp::Max>);
  m.impl("argmin.out", argmax_out<ReduceOp::Min>);
  m.impl("var.correction", var<false>);
  m.impl("std.correction", var<true>);
  m.impl("var_mean.correction", var_mean<false>);
  m.impl("std_mean.correction", var_mean<true>);
  m.impl("linalg_vector_norm", vectorNorm);
  m.impl("linalg_vector_norm.out", vector_norm_out);
  m.impl("_foreach_norm.Scalar", foreach_norm);
  m.impl("cumsum", cumsumFn);
  m.impl("cumsum_", cumsumInplace);
  m.impl("cumsum.out", cumsum_out);
}

}  // namespace
}  // namespace accel
