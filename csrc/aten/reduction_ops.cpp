// Reductions: sum, nansum, mean, prod, amax/amin, max/min (full and with indices), argmax/argmin,
// var/std (+ _mean), linalg_vector_norm (and aten::norm over it), _foreach_norm, the scans (cumsum,
// cumprod, _logcumsumexp, and the _cummax/_cummin helpers behind cummax and cummin). Output shapes
// and dtypes come from ATen's reduction helpers (make_dim_mask, shape_from_dim_mask,
// get_dtype_from_self); the kernel gets the input's kept and reduced dimensions as sizes and byte
// strides.
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/real.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/var.h>
#include <ATen/ops/var_mean.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/reduce.h"

namespace accel {
namespace {

using at::Tensor;
using at::native::DimMask;
using kernels::ReduceOp;
using kernels::ScanOp;

// Appends a dimension to a list kept innermost first, merging it into the previous one when
// every stride continues it (so the linear index over the list is unchanged).
struct DimList {
  int n = 0;
  int64_t sizes[kernels::kMaxDims];
  int64_t strides[3][kernels::kMaxDims];
  void add(int64_t size, const int64_t (&s)[3], int nstrides) {
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < nstrides; ++k) merge = merge && s[k] == strides[k][n - 1] * sizes[n - 1];
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
    if (outs[k]->defined())
      keep[k] = at::native::review_reduce_result(*outs[k], ndim, mask, keepdim);

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
    TORCH_CHECK(keep[k].is_privateuseone(),
                "Expected all tensors to be on the same device, but "
                "found at least two devices, ",
                keep[k].device(), " and ", self.device(), "!");
    d.out[k] = static_cast<char*>(keep[k].data_ptr());
    d.out_dtype[k] = toKernelDType(keep[k].scalar_type());
  }
  const int device = self.device().index();
  const rt::Stream stream = currentRuntimeStream(device);
  // Scratch for a split reduction's partials, freed in stream order after the launch.
  Tensor workspace;
  if (const int64_t bytes = kernels::reduceTable().workspace_bytes(op, d, params, stream)) {
    workspace = at::empty({bytes}, self.options().dtype(at::kByte));
    d.workspace = static_cast<char*>(workspace.data_ptr());
  }
  ACCEL_RT_CHECK(kernels::reduceTable().reduce(op, d, params, stream), device);
}

int64_t reducedNumel(const Tensor& self, const DimMask& mask) {
  int64_t n = 1;
  for (int dim = 0; dim < self.dim(); ++dim)
    if (mask[dim]) n *= self.size(dim);
  return n;
}

// The result of reducing `self` over `mask`: new, or the given out= tensor resized, which
// must have the result's dtype (as for CPU's reductions).
Tensor reduceResult(const Output& out, const Tensor& self, const DimMask& mask, bool keepdim,
                    c10::ScalarType dtype) {
  return out.allocate(at::native::shape_from_dim_mask(self, mask, keepdim),
                      self.options().dtype(dtype), Output::DTypeRule::Exact);
}

// The dtype a sum or prod accumulates into: `dtype`, else an out= tensor's, else self's
// (integers and bool promoted to int64).
c10::ScalarType sumDType(const Tensor& self, std::optional<c10::ScalarType> dtype,
                         const Output& out) {
  if (dtype) return *dtype;
  if (out.isGiven()) return out.tensor().scalar_type();
  return at::native::get_dtype_from_self(self, dtype, true);
}

// CPU sums (and multiplies) the input cast to the dtype it accumulates in. The kernels
// convert each element as they read it, which is the same cast, except into bool (x != 0,
// not through an integer): that input is cast first.
Tensor castForReduce(const Tensor& self, c10::ScalarType dtype) {
  return dtype == at::kBool && self.scalar_type() != at::kBool ? self.ne(0) : self;
}

// std, var and mean compute an out= result in the out tensor's dtype, which `result` (the
// dtype they would give) must cast to, as on CPU; without out=, in `result`.
c10::ScalarType castableOutDType(const Output& out, c10::ScalarType result) {
  if (!out.isGiven()) return result;
  const c10::ScalarType t = out.tensor().scalar_type();
  TORCH_CHECK(c10::canCast(result, t), "result type ", result,
              " can't be cast to the desired output type ", t);
  return t;
}

bool nativeInputs(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  return kernelSupports(self.scalar_type()) && (!dtype || kernelSupports(*dtype));
}

// The complex dtypes sums take: complex64/complex128, and complex32 for sum itself (`half`):
// CUDA's sum has it, accumulating in float, where CPU has no complex32 sum, mean or prod.
bool complexSummable(c10::ScalarType t, bool half = false) {
  return half ? kernelSupportsComplex(t) : complexFloatOrDouble(t);
}

// sum and mean also take complex64/complex128 (into either); sum complex32 too (`half`).
bool nativeSumInputs(const Tensor& self, std::optional<c10::ScalarType> dtype, bool half = false) {
  if (!complexSummable(self.scalar_type(), half)) return nativeInputs(self, dtype);
  return !dtype || complexSummable(*dtype, half);
}

// A complex sum is a pair of real sums: the components reduce as a kept innermost dimension.
void launchSum(const Tensor& self, const DimMask& mask, bool keepdim, const Tensor& result,
               kernels::ReduceParams params = {}) {
  if (!self.is_complex()) {
    launchReduce(ReduceOp::Sum, self, mask, keepdim, result, {}, params);
    return;
  }
  TORCH_CHECK(result.is_complex(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", result.scalar_type(), " instead");
  DimMask components = mask;
  components.reset(self.dim());
  launchReduce(ReduceOp::Sum, at::view_as_real(self), components, keepdim, at::view_as_real(result),
               {}, params);
}

// --- sum, mean, prod ------------------------------------------------------------------------

struct Sum {
  static constexpr bool kComplex = true;
  static bool native(const Tensor& self, at::OptionalIntArrayRef, bool,
                     std::optional<c10::ScalarType> dtype) {
    return nativeSumInputs(self, dtype, /*half=*/true);
  }
  static Tensor compute(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<c10::ScalarType> dtype, const Output& out) {
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    Tensor result = reduceResult(out, self, mask, keepdim, sumDType(self, dtype, out));
    launchSum(castForReduce(self, result.scalar_type()), mask, keepdim, result);
    return out.finish(result);
  }
};

struct SumFull {
  static bool native(const Tensor& self, std::optional<c10::ScalarType> dtype) {
    return nativeSumInputs(self, dtype, /*half=*/true);
  }
  static Tensor compute(const Tensor& self, std::optional<c10::ScalarType> dtype) {
    return Sum::compute(self, std::nullopt, false, dtype, Output());
  }
};

// nansum: the sum with NaNs read as 0 (integers hold none); CPU has no complex nansum. Half and
// bfloat16 add in float as sum does (CPU's bfloat16 nansum adds in bfloat16, farther from the
// exact sum).
struct NanSum {
  static bool native(const Tensor& self, at::OptionalIntArrayRef, bool,
                     std::optional<c10::ScalarType> dtype) {
    return !self.is_complex() && !(dtype && at::isComplexType(*dtype)) &&
           nativeSumInputs(self, dtype);
  }
  static Tensor compute(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<c10::ScalarType> dtype, const Output& out) {
    // Without dtype=, CPU's kernel runs in an out= tensor's dtype and adds floating dtypes only:
    // a floating input into an integer out= is its NotImplementedError, unless nothing is added.
    if (!dtype && out.isGiven() && at::isFloatingType(self.scalar_type()) && self.numel() > 0) {
      const c10::ScalarType t = out.tensor().scalar_type();
      TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"nansum_cpu\" not implemented for '", t,
                                  "'");
    }
    const Tensor x = at::isFloatingType(self.scalar_type())
                         ? at::where(at::isnan(self), at::zeros({}, self.options()), self)
                         : self;
    return Sum::compute(x, dim, keepdim, dtype, out);
  }
};

struct Mean {
  static constexpr bool kComplex = true;
  static bool native(const Tensor& self, at::OptionalIntArrayRef, bool,
                     std::optional<c10::ScalarType> dtype) {
    return nativeSumInputs(self, dtype);
  }
  static Tensor compute(const Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<c10::ScalarType> dtype, const Output& out) {
    TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()) ||
                    dtype.has_value(),
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                "point or complex dtype. Got: ",
                self.scalar_type());
    const c10::ScalarType out_dtype = dtype ? *dtype : castableOutDType(out, self.scalar_type());
    TORCH_CHECK(at::isFloatingType(out_dtype) || at::isComplexType(out_dtype),
                "mean(): could not infer output dtype. Optional dtype must be either a floating "
                "point or complex dtype. Got: ",
                out_dtype);
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    Tensor result = reduceResult(out, self, mask, keepdim, out_dtype);
    kernels::ReduceParams p;
    p.factor = 1.0 / static_cast<double>(reducedNumel(self, mask));
    launchSum(self, mask, keepdim, result, p);
    return out.finish(result);
  }
};

struct MeanFull {
  static bool native(const Tensor& self, std::optional<c10::ScalarType> dtype) {
    return nativeSumInputs(self, dtype);
  }
  static Tensor compute(const Tensor& self, std::optional<c10::ScalarType> dtype) {
    return Mean::compute(self, std::nullopt, false, dtype, Output());
  }
};

struct Prod {
  static bool native(const Tensor& self, int64_t, bool, std::optional<c10::ScalarType> dtype) {
    return nativeInputs(self, dtype);
  }
  static Tensor compute(const Tensor& self, int64_t dim, bool keepdim,
                        std::optional<c10::ScalarType> dtype, const Output& out) {
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    Tensor result = reduceResult(out, self, mask, keepdim, sumDType(self, dtype, out));
    launchReduce(ReduceOp::Prod, castForReduce(self, result.scalar_type()), mask, keepdim, result,
                 {});
    return out.finish(result);
  }
};

struct ProdFull {
  static bool native(const Tensor& self, std::optional<c10::ScalarType> dtype) {
    return nativeInputs(self, dtype);
  }
  static Tensor compute(const Tensor& self, std::optional<c10::ScalarType> dtype) {
    const DimMask mask = at::native::make_dim_mask(std::nullopt, self.dim());
    Tensor result = reduceResult(Output(), self, mask, false, sumDType(self, dtype, Output()));
    launchReduce(ReduceOp::Prod, castForReduce(self, result.scalar_type()), mask, false, result,
                 {});
    return result;
  }
};

// --- max / min family -----------------------------------------------------------------------

constexpr const char* extremeName(ReduceOp op, const char* max_name, const char* min_name) {
  return op == ReduceOp::Max ? max_name : min_name;
}

template <ReduceOp Op>
struct Amax {
  static bool native(const Tensor& self, at::IntArrayRef, bool) {
    return kernelSupports(self.scalar_type());
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef dim, bool keepdim, const Output& out) {
    if (self.numel() == 0)
      at::native::zero_numel_check_dims(self, dim, extremeName(Op, "amax", "amin"));
    TORCH_CHECK(!out.isGiven() || self.scalar_type() == out.tensor().scalar_type(),
                "Expected the dtype for input and out to match, but got ", self.scalar_type(),
                " for input's dtype and ", out.tensor().scalar_type(), " for out's dtype.");
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    Tensor result = reduceResult(out, self, mask, keepdim, self.scalar_type());
    launchReduce(Op, self, mask, keepdim, result, {});
    return out.finish(result);
  }
};

template <ReduceOp Op>
struct MaxFull {
  static bool native(const Tensor& self) { return kernelSupports(self.scalar_type()); }
  static Tensor compute(const Tensor& self) {
    TORCH_CHECK(self.numel() > 0, extremeName(Op, "max", "min"),
                "(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.");
    Tensor out = at::empty({}, self.options());
    launchReduce(Op, self, at::native::make_dim_mask(std::nullopt, self.dim()), false, out, {});
    return out;
  }
};

// max.dim / min.dim: values and their indices.
template <ReduceOp Op>
struct MaxDim {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, int64_t, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, int64_t dim, bool keepdim,
                                            const Output& values, const Output& indices) {
    const char* name = extremeName(Op, "max", "min");
    dim = c10::maybe_wrap_dim(dim, self.dim());
    if (self.numel() == 0) at::native::zero_numel_check_dims(self, dim, name);
    TORCH_CHECK(!values.isGiven() || values.tensor().scalar_type() == self.scalar_type(),
                "expected scalar_type ", self.scalar_type(), " but found ",
                values.tensor().scalar_type());
    TORCH_CHECK(!indices.isGiven() || indices.tensor().scalar_type() == at::kLong,
                "expected indices to have dtype Long");
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    Tensor v = reduceResult(values, self, mask, keepdim, self.scalar_type());
    Tensor i = reduceResult(indices, self, mask, keepdim, at::kLong);
    values.checkNoOverlap({self});
    indices.checkNoOverlap({self});
    launchReduce(Op, self, mask, keepdim, v, i);
    return {values.finish(v), indices.finish(i)};
  }
};

// aminmax: amin and amax in one call (searchsorted's sorter check uses it).
struct Aminmax {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& self, std::optional<int64_t>, bool) {
    return kernelSupports(self.scalar_type());
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, std::optional<int64_t> dim,
                                            bool keepdim, const Output& min, const Output& max) {
    if (dim) {
      dim = c10::maybe_wrap_dim(*dim, self.dim());
      at::native::zero_numel_check_dims(self, *dim, "aminmax");
    } else {
      TORCH_CHECK(self.numel() > 0,
                  "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                  "has no identity.");
    }
    // The structured ops' wording, dtypes as TypeMeta names ("float", "double").
    for (const Output* out : {&min, &max})
      TORCH_CHECK(!out->isGiven() || out->tensor().scalar_type() == self.scalar_type(),
                  "Expected out tensor to have dtype ", self.dtype(), ", but got ",
                  out->tensor().dtype(), " instead");
    const DimMask mask = dim ? at::native::make_dim_mask(*dim, self.dim())
                             : at::native::make_dim_mask(std::nullopt, self.dim());
    Tensor lo = reduceResult(min, self, mask, keepdim, self.scalar_type());
    Tensor hi = reduceResult(max, self, mask, keepdim, self.scalar_type());
    min.checkNoOverlap({self});
    max.checkNoOverlap({self});
    launchReduce(ReduceOp::Min, self, mask, keepdim, lo, {});
    launchReduce(ReduceOp::Max, self, mask, keepdim, hi, {});
    return {min.finish(lo), max.finish(hi)};
  }
};

template <ReduceOp Op>
struct Argmax {
  static bool native(const Tensor& self, std::optional<int64_t>, bool) {
    return kernelSupports(self.scalar_type());
  }
  static Tensor compute(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                        const Output& out) {
    const char* name = extremeName(Op, "argmax", "argmin");
    TORCH_CHECK(self.scalar_type() != at::kBool, name, "(): does not support bool input");
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
    Tensor result = reduceResult(out, self, mask, keepdim, at::kLong);
    launchReduce(Op, self, mask, keepdim, {}, result);
    return out.finish(result);
  }
};

// --- var / std ------------------------------------------------------------------------------

c10::ScalarType checkVarInput(const Tensor& self, const char* name) {
  const c10::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t), name,
              "(): input tensor should be of floating point or complex dtype. Got ", t,
              " instead.");
  return t;
}

kernels::ReduceParams varParams(const std::optional<c10::Scalar>& correction, bool take_sqrt) {
  kernels::ReduceParams p;
  p.correction = correction ? correction->toDouble() : 1.0;
  p.take_sqrt = take_sqrt;
  return p;
}

bool nativeVar(const Tensor& self, const std::optional<c10::Scalar>& correction) {
  const c10::ScalarType t = self.scalar_type();
  return (kernelSupports(t) || complexSummable(t)) && (!correction || !correction->isComplex());
}

// A complex tensor's variance is the sum of its parts' variances, and its mean the complex
// number of their means: ATen's own recipe, so the values are CPU's.
std::pair<Tensor, Tensor> complexParts(const Tensor& self) {
  const Tensor z = self.is_conj() ? self.resolve_conj() : self;
  return {at::real(z), at::imag(z)};
}

template <bool Std>
struct Var {
  static constexpr bool kComplex = true;
  static bool native(const Tensor& self, at::OptionalIntArrayRef,
                     const std::optional<c10::Scalar>& correction, bool) {
    return nativeVar(self, correction);
  }
  static Tensor compute(const Tensor& self, at::OptionalIntArrayRef dim,
                        const std::optional<c10::Scalar>& correction, bool keepdim,
                        const Output& out) {
    const c10::ScalarType t = checkVarInput(self, Std ? "std" : "var");
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    if (self.is_complex()) {
      const c10::ScalarType real = c10::toRealValueType(t);
      Tensor result = reduceResult(out, self, mask, keepdim, castableOutDType(out, real));
      const auto [re, im] = complexParts(self);
      at::add_out(result, at::var(re, dim, correction, keepdim),
                  at::var(im, dim, correction, keepdim));
      if (Std) at::sqrt_out(result, result);
      return out.finish(result);
    }
    Tensor result = reduceResult(out, self, mask, keepdim, castableOutDType(out, t));
    launchReduce(ReduceOp::Var, self, mask, keepdim, result, {}, varParams(correction, Std));
    return out.finish(result);
  }
};

template <bool Std>
struct VarMean {
  static constexpr int kOutputs = 2;
  static constexpr bool kComplex = true;
  static bool native(const Tensor& self, at::OptionalIntArrayRef,
                     const std::optional<c10::Scalar>& correction, bool) {
    return nativeVar(self, correction);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction,
                                            bool keepdim, const Output& var_out,
                                            const Output& mean_out) {
    const c10::ScalarType t = checkVarInput(self, Std ? "std_mean" : "var_mean");
    const DimMask mask = at::native::make_dim_mask(dim, self.dim());
    if (self.is_complex()) {
      Tensor var = reduceResult(var_out, self, mask, keepdim, c10::toRealValueType(t));
      Tensor mean = reduceResult(mean_out, self, mask, keepdim, t);
      const auto [re, im] = complexParts(self);
      const auto [re_var, re_mean] = at::var_mean(re, dim, correction, keepdim);
      const auto [im_var, im_mean] = at::var_mean(im, dim, correction, keepdim);
      at::add_out(var, re_var, im_var);
      if (Std) at::sqrt_out(var, var);
      at::complex_out(mean, re_mean, im_mean);
      return {var_out.finish(var), mean_out.finish(mean)};
    }
    Tensor var = reduceResult(var_out, self, mask, keepdim, t);
    Tensor mean = reduceResult(mean_out, self, mask, keepdim, t);
    launchReduce(ReduceOp::Var, self, mask, keepdim, var, mean, varParams(correction, Std));
    return {var_out.finish(var), mean_out.finish(mean)};
  }
};

// --- norms ----------------------------------------------------------------------------------

struct VectorNorm {
  static bool native(const Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef, bool,
                     std::optional<c10::ScalarType> dtype) {
    if (ord.isComplex()) return false;
    if (self.is_complex())
      return complexSummable(self.scalar_type()) && (!dtype || complexSummable(*dtype));
    return nativeInputs(self, dtype);
  }
  static Tensor compute(const Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim,
                        bool keepdim, std::optional<c10::ScalarType> dtype, const Output& out) {
    // A complex vector's norm is its magnitudes' (in `dtype` when given, as CPU).
    if (self.is_complex())
      return compute(at::abs(dtype ? self.to(*dtype) : self), ord, dim, keepdim, std::nullopt, out);
    const c10::ScalarType t = self.scalar_type();
    TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
                t);
    // As CPU's meta function: the real type of `dtype` or self's; an out= must have it.
    const c10::ScalarType out_dtype = c10::toRealValueType(dtype.value_or(t));
    const double p = ord.toDouble();
    const DimMask mask = at::native::make_dim_mask(dim, self.dim(), /*allow_empty_dims=*/true);
    if (self.numel() == 0 && p < 0) {
      TORCH_CHECK(false, "linalg.vector_norm cannot compute the ", p,
                  " norm on an empty tensor because the operation does not have an identity");
    }
    Tensor result = reduceResult(out, self, mask, keepdim, out_dtype);
    kernels::ReduceParams params;
    params.p = p;
    launchReduce(ReduceOp::Norm, self, mask, keepdim, result, {}, params);
    return out.finish(result);
  }
};

// aten::norm (Tensor.norm(p, dim), and what calls it with a dim): the vector norm, p None
// meaning 2 and an empty dim every dim, as CPU's norm_out.
Tensor norm(const Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim,
            bool keepdim, std::optional<c10::ScalarType> dtype, const Output& out) {
  return VectorNorm::compute(self, p.value_or(2.0), dim.empty() ? at::OptionalIntArrayRef() : dim,
                             keepdim, dtype, out);
}

struct Norm {
  static bool native(const Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef,
                     bool) {
    // Other dtypes take the fallback, whose CPU kernel raises norm()'s error.
    return (at::isFloatingType(self.scalar_type()) || complexSummable(self.scalar_type())) &&
           VectorNorm::native(self, p.value_or(2.0), std::nullopt, false, std::nullopt);
  }
  static Tensor compute(const Tensor& self, const std::optional<c10::Scalar>& p,
                        at::IntArrayRef dim, bool keepdim, const Output& out) {
    return norm(self, p, dim, keepdim, std::nullopt, out);
  }
};

struct NormDType {
  static bool native(const Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef, bool,
                     c10::ScalarType dtype) {
    return at::isFloatingType(self.scalar_type()) && at::isFloatingType(dtype) &&
           VectorNorm::native(self, p.value_or(2.0), std::nullopt, false, dtype);
  }
  static Tensor compute(const Tensor& self, const std::optional<c10::Scalar>& p,
                        at::IntArrayRef dim, bool keepdim, c10::ScalarType dtype,
                        const Output& out) {
    return norm(self, p, dim, keepdim, dtype, out);
  }
};

struct ForeachNorm {
  static bool native(at::TensorList tensors, const c10::Scalar& ord,
                     std::optional<c10::ScalarType> dtype) {
    for (const Tensor& t : tensors)
      if (!VectorNorm::native(t, ord, std::nullopt, false, dtype)) return false;
    return true;
  }
  static std::vector<Tensor> compute(at::TensorList tensors, const c10::Scalar& ord,
                                     std::optional<c10::ScalarType> dtype) {
    std::vector<Tensor> result;
    result.reserve(tensors.size());
    for (const Tensor& t : tensors)
      result.push_back(VectorNorm::compute(t, ord, std::nullopt, false, dtype, Output()));
    return result;
  }
};

// --- scans ----------------------------------------------------------------------------------

// Scans `self` along `dim` into a new contiguous tensor of dtype `out_dtype` (and, for Max and
// Min, into `indices`, a contiguous int64 tensor of self's sizes). The input is cast to
// out_dtype first, as on CPU. A complex Sum is a pair of real sums: the components scan as a
// kept innermost dimension.
Tensor scanInto(ScanOp op, const Tensor& self, int64_t dim, c10::ScalarType out_dtype,
                const Tensor& indices = Tensor()) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  Tensor in = self;
  if (!self.is_contiguous() || self.scalar_type() != out_dtype) {  // one copy does both
    in = at::empty(self.sizes(), self.options().dtype(out_dtype));
    in.copy_(self);
  }
  Tensor out = at::empty(self.sizes(), self.options().dtype(out_dtype));
  if (out.numel() == 0) return out;
  const bool complex = at::isComplexType(out_dtype);
  TORCH_INTERNAL_ASSERT(!complex || op == ScanOp::Sum);
  kernels::ScanDesc d;
  d.op = op;
  d.in = static_cast<const char*>(in.const_data_ptr());
  d.out = static_cast<char*>(out.data_ptr());
  d.dtype = toKernelDType(complex ? c10::toRealValueType(out_dtype) : out_dtype);
  if (indices.defined()) d.indices = indices.data_ptr<int64_t>();
  if (self.dim() > 0) {
    for (int64_t k = 0; k < dim; ++k) d.outer *= self.size(k);
    d.n = self.size(dim);
    for (int64_t k = dim + 1; k < self.dim(); ++k) d.inner *= self.size(k);
  }
  if (complex) d.inner *= 2;
  const int device = self.device().index();
  const rt::Stream stream = currentRuntimeStream(device);
  // Scratch for a split scan's carries, freed in stream order after the launch.
  Tensor workspace;
  if (const int64_t bytes = kernels::reduceTable().scan_workspace_bytes(d, stream)) {
    workspace = at::empty({bytes}, self.options().dtype(at::kByte));
    d.workspace = static_cast<char*>(workspace.data_ptr());
  }
  ACCEL_RT_CHECK(kernels::reduceTable().scan(d, stream), device);
  return out;
}

// cumsum and cumprod: the dtype rules of sum and prod.
template <ScanOp Op>
struct Cumulative {
  static constexpr const char* kName = Op == ScanOp::Sum ? "cumsum" : "cumprod";
  static constexpr bool kComplex = Op == ScanOp::Sum;  // cumsum of complex64 and complex128
  static bool native(const Tensor& self, int64_t, std::optional<c10::ScalarType> dtype) {
    if (Op == ScanOp::Prod) return nativeInputs(self, dtype);
    // The input is cast to the result's dtype first: any pair of these goes.
    auto takes = [](c10::ScalarType t) { return kernelSupports(t) || complexSummable(t); };
    return takes(self.scalar_type()) && (!dtype || takes(*dtype));
  }
  static Tensor compute(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype,
                        const Output& out) {
    if (out.form() == Output::Form::InPlace) {
      TORCH_CHECK(!dtype || *dtype == self.scalar_type(),
                  "provided dtype must match the dtype of self tensor in ", kName, ". Got ", *dtype,
                  " and ", self.scalar_type(), ".");
    }
    const c10::ScalarType out_dtype = sumDType(self, dtype, out);
    Tensor scanned = scanInto(Op, self, dim, out_dtype);
    if (!out.isGiven()) return scanned;
    Tensor result = out.allocate(self.sizes(), self.options().dtype(out_dtype));
    result.copy_(scanned);
    return out.finish(result);
  }
};

// _cummax_helper / _cummin_helper: cummax(_out) and cummin(_out) have checked and resized
// values and indices to self's sizes (which may be non-contiguous) and wrapped dim.
template <ScanOp Op>
struct CumExtremum {
  static bool native(const Tensor& self, const Tensor&, const Tensor&, int64_t) {
    return kernelSupports(self.scalar_type());
  }
  static void compute(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim) {
    Tensor idx = at::empty(self.sizes(), self.options().dtype(at::kLong));
    values.copy_(scanInto(Op, self, dim, self.scalar_type(), idx));
    indices.copy_(idx);
  }
};

// _logcumsumexp (behind logcumsumexp): floating dtypes; complex ones take the fallback.
struct LogCumSumExp {
  static bool native(const Tensor& self, int64_t) {
    return at::isFloatingType(self.scalar_type()) && kernelSupports(self.scalar_type());
  }
  static Tensor compute(const Tensor& self, int64_t dim, const Output& out) {
    Tensor scanned = scanInto(ScanOp::LogSumExp, self, dim, self.scalar_type());
    if (!out.isGiven()) return scanned;
    Tensor result = out.allocate(self.sizes(), self.options());
    result.copy_(scanned);
    return out.finish(result);
  }
};

// The sum of a matrix's diagonal; integers sum into int64, as sum() and CPU's trace do.
struct Trace {
  static bool native(const Tensor& self) {
    const c10::ScalarType t = self.scalar_type();
    return (kernelSupports(t) && t != at::kBool) || complexSummable(t);  // a complex diagonal sums
  }
  static Tensor compute(const Tensor& self) {
    TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
    return self.diagonal().sum();
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<SumFull>(m, "sum");
  registerNative<Trace>(m, "trace");
  registerForms<Sum>(m, "sum.dim_IntList", nullptr, "sum.IntList_out");
  registerForms<NanSum>(m, "nansum", nullptr, "nansum.out");
  registerNative<MeanFull>(m, "mean");
  registerForms<Mean>(m, "mean.dim", nullptr, "mean.out");
  registerNative<ProdFull>(m, "prod");
  registerForms<Prod>(m, "prod.dim_int", nullptr, "prod.int_out");
  registerForms<Amax<ReduceOp::Max>>(m, "amax", nullptr, "amax.out");
  registerForms<Amax<ReduceOp::Min>>(m, "amin", nullptr, "amin.out");
  registerNative<MaxFull<ReduceOp::Max>>(m, "max");
  registerNative<MaxFull<ReduceOp::Min>>(m, "min");
  registerForms<MaxDim<ReduceOp::Max>>(m, "max.dim", nullptr, "max.dim_max");
  registerForms<MaxDim<ReduceOp::Min>>(m, "min.dim", nullptr, "min.dim_min");
  registerForms<Aminmax>(m, "aminmax", nullptr, "aminmax.out");
  registerForms<Argmax<ReduceOp::Max>>(m, "argmax", nullptr, "argmax.out");
  registerForms<Argmax<ReduceOp::Min>>(m, "argmin", nullptr, "argmin.out");
  registerForms<Var<false>>(m, "var.correction", nullptr, "var.correction_out");
  registerForms<Var<true>>(m, "std.correction", nullptr, "std.correction_out");
  registerForms<VarMean<false>>(m, "var_mean.correction", nullptr, "var_mean.correction_out");
  registerForms<VarMean<true>>(m, "std_mean.correction", nullptr, "std_mean.correction_out");
  registerForms<VectorNorm>(m, "linalg_vector_norm", nullptr, "linalg_vector_norm.out");
  registerForms<Norm>(m, "norm.ScalarOpt_dim", nullptr, "norm.out");
  registerForms<NormDType>(m, "norm.ScalarOpt_dim_dtype", nullptr, "norm.dtype_out");
  registerNative<ForeachNorm>(m, "_foreach_norm.Scalar");
  registerForms<Cumulative<ScanOp::Sum>>(m, "cumsum", "cumsum_", "cumsum.out");
  registerForms<Cumulative<ScanOp::Prod>>(m, "cumprod", "cumprod_", "cumprod.out");
  registerForms<LogCumSumExp>(m, "_logcumsumexp", nullptr, "_logcumsumexp.out");
  registerNative<CumExtremum<ScanOp::Max>>(m, "_cummax_helper");
  registerNative<CumExtremum<ScanOp::Min>>(m, "_cummin_helper");
}

}  // namespace
}  // namespace accel
