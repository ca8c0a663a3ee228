// Indexing ops: index_select, gather, scatter (src, value, add, multiply),
// scatter_reduce, index_add, index_reduce, embedding's backward and renorm, advanced indexing
// (index.Tensor) and its assignment (_index_put_impl_). Each lays the destination, the source and
// the indices over one iteration shape (the indexed dimensions of the indexed operand restrided to
// 0) and calls the indexing kernel, after checking the index values on the device (see
// checkIndexRange for the price and the reason). masked_select and masked_scatter_ are made of
// these. The ops that only move elements (gathers, copies, fills, advanced indexing) take a
// complex tensor as its real view, so each index moves both parts; index_put_'s accumulation
// then adds part to part, which is the complex sum.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorOperators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/IndexingUtils.h>
#include <ATen/native/ScatterGatherChecks.h>
#include <ATen/native/TensorAdvancedIndexingUtils.h>
#include <ATen/Dispatch.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"
#include "aten/index_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/index.h"

namespace accel {
namespace {

using kernels::IndexMode;

void launch(const kernels::IndexDesc& d, IndexMode mode, const c10::Scalar& scalar,
            const at::Tensor& on) {
  if (d.iter.numel == 0) return;
  const int device = on.device().index();
  ACCEL_RT_CHECK(
      kernels::indexTable().index(d, mode, toKernelScalar(scalar), currentRuntimeStream(device)),
      device);
}

at::Tensor onDevice(const at::Tensor& t, const at::Tensor& like) {
  return t.device() == like.device() ? t : t.to(like.device());
}

// A 0-dim tensor seen as one dimension of size 1 (the scatter/gather convention).
at::Tensor atLeast1d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

bool nativeSelf(const at::Tensor& t) { return kernelSupports(t.scalar_type()); }

// The ops that only move elements take complex64/128 as their real views (a trailing
// dimension of the two parts): a complex copy is a copy of both parts.
bool movesComplex(const at::Tensor& t) { return complexFloatOrDouble(t.scalar_type()); }
// A tensor such an op writes: a conjugate view's real view would be a copy.
bool writesNatively(const at::Tensor& t) {
  return nativeSelf(t) || (movesComplex(t) && !t.is_conj());
}
at::Tensor realView(const at::Tensor& t) {
  return at::view_as_real(t.is_conj() ? t.resolve_conj() : t);
}

// The self-shaped result of a scatter-like op: self itself (in-place), or self copied into the
// functional or out= result. The kernel then reads `reads` while it writes the result.
at::Tensor startFromSelf(const at::Tensor& self, const Output& out,
                         std::initializer_list<at::TensorBase> reads) {
  at::Tensor result = out.allocate(self.sizes(), self.options(), Output::DTypeRule::Exact);
  out.checkNoOverlap(reads);
  if (!result.is_same(self)) copyOnDevice(result, self);
  return result;
}

// ---- gather / scatter ---------------------------------------------------------------------

struct Gather {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, bool) {
    return nativeSelf(self) || movesComplex(self);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            bool sparse_grad, const Output& out) {
    dim = at::maybe_wrap_dim(dim, self.dim());
    // CPU's order: the out= rules (its dtype first), the overlaps (an out= that is the index
    // itself is allowed: each element reads its index before it is written), then the index.
    at::Tensor result = out.allocate(index.sizes(), self.options(), Output::DTypeRule::Exact);
    out.checkNoOverlap({self});
    if (out.isGiven()) at::assert_no_partial_overlap(out.tensor(), index);
    at::native::scatter_gather_dtype_check("gather", self, index, std::nullopt);
    if (index.numel() == 0) return out.finish(result);  // no matching shape needed, as on CPU
    at::native::gather_shape_check(self, dim, index);
    at::Tensor src = atLeast1d(self), idx = atLeast1d(onDevice(index, self));
    at::Tensor dst = atLeast1d(result);
    checkIndexRange(idx, src.size(dim), false, dim, nullptr, false);
    std::vector<int64_t> shape = idx.sizes().vec(), idx_strides = idx.strides().vec();
    if (src.is_complex()) {  // each index picks both parts
      src = realView(src);
      dst = at::view_as_real(dst);
      shape.push_back(2);
      idx_strides.push_back(0);
    }
    auto d = makeIndexDesc(shape, {{dst, dst.strides().vec()}, {src, stridesWithout(src, dim)}},
                           {{idx, idx_strides}}, {src.size(dim)}, {src.stride(dim)}, 1);
    launch(d, IndexMode::Copy, 0, result);
    return out.finish(result);
  }
};

// self[index[i][j]][j] = src[i][j] (dim 0), or += for Add, or = value for Fill.
void scatterInto(const at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                 const at::Tensor& src_, IndexMode mode, const c10::Scalar& scalar,
                 const char* name) {
  dim = at::maybe_wrap_dim(dim, self_.dim());
  std::optional<at::Tensor> src_opt;
  if (src_.defined()) src_opt = src_;
  at::native::scatter_gather_dtype_check(name, self_, index_, src_opt);
  at::native::scatter_shape_check(self_, dim, index_, src_opt);
  if (index_.numel() == 0) return;
  at::Tensor self = atLeast1d(self_), index = atLeast1d(onDevice(index_, self_));
  checkIndexRange(index, self.size(dim), false, dim, nullptr, false);
  std::vector<int64_t> shape = index.sizes().vec(), index_strides = index.strides().vec();
  at::Tensor src = src_.defined() ? atLeast1d(src_) : at::Tensor();
  if (self.is_complex()) {
    if (mode == IndexMode::Fill) {  // each part takes its part of the value
      const c10::complex<double> z = scalar.toComplexDouble();
      const at::Tensor parts = at::view_as_real(self);
      IndicesInRange checked;
      scatterInto(parts.select(-1, 0), dim, index, src, mode, z.real(), name);
      scatterInto(parts.select(-1, 1), dim, index, src, mode, z.imag(), name);
      return;
    }
    // Copy and Add: each index moves (adds) both parts.
    self = at::view_as_real(self);
    src = realView(src);
    shape.push_back(2);
    index_strides.push_back(0);
  }
  std::vector<IndexOperand> ops{{self, stridesWithout(self, dim)}};
  if (src.defined()) ops.push_back({src, src.strides().vec()});
  auto d =
      makeIndexDesc(shape, ops, {{index, index_strides}}, {self.size(dim)}, {self.stride(dim)}, 0);
  launch(d, mode, scalar, self_);
}

template <IndexMode Mode>
struct ScatterSrc {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor&) {
    return writesNatively(self);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, const Output& out) {
    at::Tensor result = startFromSelf(self, out, {index, src});
    scatterInto(result, dim, index, src, Mode, 1,
                Mode == IndexMode::Add ? "scatter_add" : "scatter");
    return out.finish(result);
  }
};

struct ScatterValue {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const c10::Scalar& value) {
    return writesNatively(self) && (self.is_complex() || !value.isComplex());
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const c10::Scalar& value, const Output& out) {
    at::Tensor result = startFromSelf(self, out, {index});
    scatterInto(result, dim, index, at::Tensor(), IndexMode::Fill, value, "scatter");
    return out.finish(result);
  }
};

// ---- scatter_reduce / index_reduce: CPU's recipe on the kernels' combining modes --------------
// Without include_self the positions the index touches first take the reduction's identity;
// then every source element combines into its position in index order (one thread on host, so
// sums and products round exactly as CPU's); mean divides by the count of contributions (plus
// one for self), with floor division for integers, as CPU does.

enum class Reduction { Sum, Prod, Mean, Amax, Amin };

std::optional<Reduction> reductionOf(c10::string_view r) {
  if (r == "sum") return Reduction::Sum;
  if (r == "prod") return Reduction::Prod;
  if (r == "mean") return Reduction::Mean;
  if (r == "amax") return Reduction::Amax;
  if (r == "amin") return Reduction::Amin;
  return std::nullopt;
}

IndexMode modeOf(Reduction r) {
  switch (r) {
    case Reduction::Prod: return IndexMode::Mul;
    case Reduction::Amax: return IndexMode::Max;
    case Reduction::Amin: return IndexMode::Min;
    default: return IndexMode::Add;
  }
}

// The dtypes CPU reduces (mean: not bool); the others go to the fallback, which raises CPU's
// error.
bool nativeReduction(const at::Tensor& self, c10::string_view reduce) {
  const at::ScalarType t = self.scalar_type();
  const bool cpu_reduces = t != at::kUInt16 && t != at::kUInt32 && t != at::kUInt64 &&
                           (at::isIntegralType(t, /*includeBool=*/true) || at::isFloatingType(t)) &&
                           !(t == at::kBool && reduce == "mean");
  return cpu_reduces && nativeSelf(self);
}

// What the touched positions start from without include_self.
c10::Scalar identityOf(Reduction r, at::ScalarType t) {
  if (r == Reduction::Sum || r == Reduction::Mean) return 0;
  if (r == Reduction::Prod) return 1;
  const bool max = r == Reduction::Amin;
  if (at::isFloatingType(t))
    return max ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  return AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, t, "identityOf", [&] {
    return c10::Scalar(max ? std::numeric_limits<scalar_t>::max()
                           : std::numeric_limits<scalar_t>::lowest());
  });
}

// result /= count, where count (self's dtype, as CPU's) holds the contributions per position.
void divideByCount(at::Tensor& result, at::Tensor& count) {
  count.masked_fill_(count == 0, 1);
  if (at::isFloatingType(result.scalar_type()))
    result.div_(count);
  else
    result.div_(count, "floor");
}

// scatter(reduce="add"|"multiply"): scatter_add, or the product combine.
struct ScatterReduce {
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor&,
                     c10::string_view reduce) {
    return (reduce == "add" || reduce == "multiply") && nativeSelf(self);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, c10::string_view reduce, const Output& out) {
    at::Tensor result = startFromSelf(self, out, {index, src});
    at::native::scatter_gather_dtype_check("scatter", result, index, src);
    // CPU adds and multiplies half and bfloat16 in float, rounding once.
    const bool in_float = at::isReducedFloatingType(result.scalar_type());
    at::Tensor acc = in_float ? result.to(at::kFloat) : result;
    scatterInto(acc, dim, index, in_float ? src.to(at::kFloat) : src,
                reduce == "add" ? IndexMode::Add : IndexMode::Mul, 1, "scatter");
    if (in_float) copyOnDevice(result, acc);
    return out.finish(result);
  }
};

// scatter(value, reduce=...): the scalar as a source of index's shape, in self's dtype as
// CPU converts it.
struct ScatterValueReduce {
  static bool native(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const c10::Scalar& value, c10::string_view reduce) {
    return !value.isComplex() && ScatterReduce::native(self, dim, index, index, reduce);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const c10::Scalar& value, c10::string_view reduce, const Output& out) {
    const at::Tensor src = at::full(index.sizes(), value, self.options());
    return ScatterReduce::compute(self, dim, index, src, reduce, out);
  }
};

struct ScatterReduceTwo {
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor&,
                     c10::string_view reduce, bool) {
    return nativeReduction(self, reduce);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, c10::string_view reduce, bool include_self,
                            const Output& out) {
    const std::optional<Reduction> r = reductionOf(reduce);
    TORCH_CHECK(r, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
    at::Tensor result = startFromSelf(self, out, {index, src});
    at::native::scatter_gather_dtype_check("scatter_reduce", result, index, src);
    at::native::scatter_shape_check(result, at::maybe_wrap_dim(dim, result.dim()), index, src);
    if (index.numel() == 0) return out.finish(result);
    // CPU sums and multiplies half and bfloat16 in float, rounding once (a mean's sum too,
    // then divided in the dtype).
    const bool in_float = at::isReducedFloatingType(result.scalar_type()) &&
                          *r != Reduction::Amax && *r != Reduction::Amin;
    at::Tensor acc = in_float ? result.to(at::kFloat) : result;
    const at::Tensor source = in_float ? src.to(at::kFloat) : src;
    if (!include_self)
      scatterInto(acc, dim, index, at::Tensor(), IndexMode::Fill, identityOf(*r, acc.scalar_type()),
                  "scatter_reduce");
    scatterInto(acc, dim, index, source, modeOf(*r), 1, "scatter_reduce");
    if (in_float) copyOnDevice(result, acc);
    if (*r == Reduction::Mean) {
      at::Tensor count = include_self ? at::ones_like(acc) : at::zeros_like(acc);
      scatterInto(count, dim, index, at::ones_like(source), IndexMode::Add, 1, "scatter_reduce");
      count = count.to(result.scalar_type());
      divideByCount(result, count);
    }
    return out.finish(result);
  }
};

// ---- index_select / index_add / index_copy / index_fill ---------------------------------

void checkIndexVector(const at::Tensor& index, const char* name) {
  TORCH_CHECK_INDEX(index.dim() <= 1, name, "(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, name,
              "(): Expected dtype int32/int64 for index");
}

struct IndexSelect {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&) {
    return nativeSelf(self) || movesComplex(self);
  }
  static at::Tensor compute(const at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                            const Output& out) {
    checkIndexVector(index_, "index_select");
    dim = at::maybe_wrap_dim(dim, self_.dim());
    TORCH_CHECK(!out.isGiven() || self_.scalar_type() == out.tensor().scalar_type(),
                "index_select(): self and result must have the same scalar type");
    at::Tensor self = atLeast1d(self_), index = onDevice(index_, self_);
    auto shape = self.sizes().vec();
    shape[dim] = index.numel();
    // A scalar self gives a scalar result, as on CPU.
    const std::vector<int64_t> result_shape =
        self_.dim() == 0 ? (index.numel() == 1 ? std::vector<int64_t>{} : index.sizes().vec())
                         : shape;
    // Before the resize, as on CPU: an expanded out= is refused rather than reallocated.
    out.checkNoOverlap({self_, index_});
    at::Tensor result = out.allocate(result_shape, self_.options(), Output::DTypeRule::Exact);
    if (index.numel() == 0 || result.numel() == 0) return out.finish(result);
    checkIndexRange(index, self.size(dim), false, dim, "index out of range in self", true);
    at::Tensor dst = result.view(shape);
    if (self.is_complex()) {
      self = realView(self);
      dst = at::view_as_real(dst);
      shape.push_back(2);
    }
    auto d = makeIndexDesc(shape, {{dst, dst.strides().vec()}, {self, stridesWithout(self, dim)}},
                           {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)},
                           {self.stride(dim)}, 1);
    launch(d, IndexMode::Copy, 0, result);
    return out.finish(result);
  }
};

// self[..., index[i], ...] op= source[..., i, ...] into `self` (already the result). `name`
// starts the messages (index_add_, index_reduce_).
void indexCombineInto(const at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                      const at::Tensor& source_, IndexMode mode, const c10::Scalar& alpha,
                      const char* name) {
  // A 0-dim self or source is one element only when the other is 0-dim too, as on CPU.
  TORCH_CHECK((self_.dim() != 0 && source_.dim() != 0) || self_.sizes() == source_.sizes(),
              "source tensor shape must match self tensor shape, excluding the specified "
              "dimension. Got self.shape = ",
              self_.sizes(), " source.shape = ", source_.sizes());
  at::Tensor self = atLeast1d(self_), source = atLeast1d(source_);
  at::Tensor index = onDevice(index_, self_);
  TORCH_CHECK(source.dim() == self.dim(), name,
              "(): source and self must have the same number of dimensions");
  TORCH_CHECK(index.numel() == source.size(dim), name, "(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim) (", source.size(dim), ")");
  for (int64_t i = 0; i < self.dim(); ++i) {
    TORCH_CHECK(i == dim || self.size(i) == source.size(i), name,
                "(): self and source must have the same size in every dimension but ", dim);
  }
  if (index.numel() == 0 || source.numel() == 0) return;
  checkIndexRange(index, self.size(dim), false, dim, "index out of range in self", true);
  std::vector<int64_t> shape = source.sizes().vec(), idx_strides = alongDim(index, self.dim(), dim);
  if (self.is_complex()) {  // a complex sum adds each part on its own
    TORCH_INTERNAL_ASSERT(mode == IndexMode::Add && !alpha.isComplex());
    self = at::view_as_real(self);
    source = realView(source);
    shape.push_back(2);
    idx_strides.push_back(0);
  }
  auto d =
      makeIndexDesc(shape, {{self, stridesWithout(self, dim)}, {source, source.strides().vec()}},
                    {{index, idx_strides}}, {self.size(dim)}, {self.stride(dim)}, 0);
  launch(d, mode, alpha, self_);
}

void indexAddInto(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& source, const c10::Scalar& alpha) {
  indexCombineInto(self, dim, index, source, IndexMode::Add, alpha, "index_add_");
}

struct IndexAdd {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor&,
                     const c10::Scalar& alpha) {
    return writesNatively(self) && !alpha.isComplex();
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& source, const c10::Scalar& alpha, const Output& out) {
    checkIndexVector(index, "index_add");
    dim = at::maybe_wrap_dim(dim, self.dim());
    TORCH_CHECK(self.scalar_type() == source.scalar_type(), "index_add_(): self (",
                self.scalar_type(), ") and source (", source.scalar_type(),
                ") must have the same scalar type");
    at::Tensor result = startFromSelf(self, out, {index, source});
    indexAddInto(result, dim, index, source, alpha);
    return out.finish(result);
  }
};

// index_reduce: scatter_reduce's recipe along one dimension (prod, mean, amax, amin).
struct IndexReduce {
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor&,
                     c10::string_view reduce, bool include_self) {
    // CPU has no bool index_reduce without include_self: its error comes through the fallback.
    return nativeReduction(self, reduce) && (include_self || self.scalar_type() != at::kBool);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& source, c10::string_view reduce, bool include_self,
                            const Output& out) {
    const std::optional<Reduction> r = reductionOf(reduce);
    TORCH_CHECK(r && *r != Reduction::Sum,
                "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ",
                reduce, ".");
    checkIndexVector(index, "index_reduce_");
    dim = at::maybe_wrap_dim(dim, self.dim());
    TORCH_CHECK(self.scalar_type() == source.scalar_type(), "index_reduce_(): self (",
                self.scalar_type(), ") and source (", source.scalar_type(),
                ") must have the same scalar type");
    at::Tensor result = startFromSelf(self, out, {index, source});
    if (!include_self && index.numel() > 0 && result.numel() > 0) {
      checkIndexRange(onDevice(index, result), atLeast1d(result).size(dim), false, dim,
                      "index out of range in self", true);
      result.index_fill_(dim, index, identityOf(*r, result.scalar_type()));
    }
    indexCombineInto(result, dim, index, source, modeOf(*r), 1, "index_reduce_");
    if (*r == Reduction::Mean && index.numel() > 0) {
      at::Tensor count = include_self ? at::ones_like(result) : at::zeros_like(result);
      indexAddInto(count, dim, index, at::ones_like(source), 1);
      divideByCount(result, count);
    }
    return out.finish(result);
  }
};

struct IndexCopy {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor&) {
    return writesNatively(self);
  }
  static at::Tensor compute(const at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                            const at::Tensor& source_, const Output& out) {
    checkIndexVector(index_, "index_copy");
    dim = at::maybe_wrap_dim(dim, self_.dim());
    TORCH_CHECK(self_.scalar_type() == source_.scalar_type(),
                "index_copy_(): self and source expected to have the same dtype, but got (self) ",
                self_.scalar_type(), " and (source) ", source_.scalar_type());
    at::Tensor result = startFromSelf(self_, out, {index_, source_});
    at::Tensor self = atLeast1d(result), source = atLeast1d(source_);
    at::Tensor index = onDevice(index_, self_);
    TORCH_CHECK(source.dim() == self.dim() && index.numel() == source.size(dim),
                "index_copy_(): Source/destination tensor must have same slice shapes and the ",
                "number of indices must equal source.size(dim)");
    for (int64_t i = 0; i < self.dim(); ++i) {
      TORCH_CHECK(i == dim || self.size(i) == source.size(i),
                  "index_copy_(): Source/destination tensor must have same slice shapes. "
                  "Destination slice shape: ",
                  self.sizes(), " and source slice shape: ", source.sizes());
    }
    if (index.numel() == 0 || source.numel() == 0) return out.finish(result);
    checkIndexRange(index, self.size(dim), false, dim, "index_copy_(): index out of bounds", true);
    if (self.is_complex()) {  // each index copies both parts of a slice
      self = at::view_as_real(self);
      source = realView(source);
    }
    auto d = makeIndexDesc(
        source.sizes(), {{self, stridesWithout(self, dim)}, {source, source.strides().vec()}},
        {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)}, {self.stride(dim)}, 0);
    launch(d, IndexMode::Copy, 0, result);
    return out.finish(result);
  }
};

// self.index_fill_(dim, index, value): every slice index[i] along dim becomes value.
struct IndexFill {
  static constexpr bool kComplex = true;
  static bool native(at::Tensor& self, int64_t, const at::Tensor&, const c10::Scalar& value) {
    return writesNatively(self) && (self.is_complex() || !value.isComplex());
  }
  static at::Tensor& compute(at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                             const c10::Scalar& value) {
    checkIndexVector(index_, "index_fill_");
    dim = at::maybe_wrap_dim(dim, self_.dim());
    at::Tensor self = atLeast1d(self_), index = onDevice(index_, self_);
    if (index.numel() == 0 || self.numel() == 0) return self_;
    checkIndexRange(index, self.size(dim), true, dim, nullptr, true);
    if (self.is_complex()) {  // each part takes its part of the value
      const c10::complex<double> z = value.toComplexDouble();
      at::Tensor parts = at::view_as_real(self);
      at::Tensor re = parts.select(-1, 0), im = parts.select(-1, 1);
      IndicesInRange checked;
      compute(re, dim, index, z.real());
      compute(im, dim, index, z.imag());
      return self_;
    }
    auto shape = self.sizes().vec();
    shape[dim] = index.numel();
    auto d = makeIndexDesc(shape, {{self, stridesWithout(self, dim)}},
                           {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)},
                           {self.stride(dim)}, 0);
    launch(d, IndexMode::Fill, value, self_);
    return self_;
  }
};

// A 0-dim value tensor is read on the host, as CUDA does.
struct IndexFillTensor {
  static constexpr bool kComplex = true;
  static bool native(at::Tensor& self, int64_t, const at::Tensor&, const at::Tensor& value) {
    // As IndexFill::native, without reading the value (a device value would sync twice).
    return value.dim() == 0 && writesNatively(self) && (self.is_complex() || !value.is_complex());
  }
  static at::Tensor& compute(at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& value) {
    return IndexFill::compute(self, dim, index, value.item());
  }
};

// ---- embedding ----------------------------------------------------------------------------

struct EmbeddingDenseBackward {
  static bool native(const at::Tensor& grad, const at::Tensor&, c10::SymInt, c10::SymInt,
                     bool scale_grad_by_freq) {
    return !scale_grad_by_freq && nativeSelf(grad);
  }
  static at::Tensor compute(const at::Tensor& grad, const at::Tensor& indices,
                            c10::SymInt num_weights, c10::SymInt padding_idx,
                            bool scale_grad_by_freq) {
    const int64_t rows = num_weights.expect_int();
    const int64_t dim = grad.size(-1);
    at::Tensor grad_weight = at::zeros({rows, dim}, grad.options());
    at::Tensor flat = indices.reshape({-1});
    indexAddInto(grad_weight, 0, flat, grad.reshape({flat.numel(), dim}), 1);
    // Rows looked up through padding_idx get no gradient: theirs is the only contribution.
    const int64_t pad = padding_idx.expect_int();
    if (pad >= 0 && pad < rows) grad_weight.select(0, pad).zero_();
    return grad_weight;
  }
};

// embedding_renorm_: each looked-up row whose norm exceeds max_norm scaled by
// max_norm / (norm + 1e-7), as CPU does: the norm in self's dtype, the scale computed in double
// and rounded to self's dtype, the product in it. Every looked-up row is read before any is
// written, so a repeated index writes the same row twice.
struct EmbeddingRenorm {
  static bool native(at::Tensor& self, const at::Tensor& indices, double, double) {
    return floatingKernelType(self) &&
           (indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt);
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& indices, double max_norm,
                             double norm_type) {
    TORCH_CHECK(self.dim() == 2, "embedding_renorm_(): Expected 2-dimensional tensor, but got ",
                self.dim(), "-dimensional tensor for argument #1 'self'");
    const at::Tensor flat = onDevice(indices, self).reshape({-1});
    if (flat.numel() == 0) return self;
    const at::Tensor rows = self.index_select(0, flat);
    const at::Tensor norms =
        at::linalg_vector_norm(rows, norm_type, at::IntArrayRef{1}, /*keepdim=*/true)
            .to(at::kDouble);
    const at::Tensor scale = at::where(norms > max_norm, max_norm / (norms + 1e-7), 1.0);
    self.index_copy_(0, flat, rows * scale.to(self.scalar_type()));
    return self;
  }
};

// ---- advanced indexing --------------------------------------------------------------------

// PyTorch's AdvancedIndex: self (maybe transposed so the indexed dimensions are adjacent and
// first) and the broadcast index tensors, one per indexed dimension.
struct Advanced {
  at::Tensor self;
  std::vector<at::Tensor> indices;  // defined ones, in dimension order
  int64_t before = 0;               // dimensions of self before the indexed ones
  std::vector<int64_t> shape;       // the result's shape
};

Advanced advancedIndex(const at::Tensor& self_, const c10::List<std::optional<at::Tensor>>& orig) {
  at::native::checkIndexTensorTypes(orig, /*allow_int=*/true);
  TORCH_CHECK_INDEX(orig.size() <= static_cast<size_t>(self_.dim()),
                    "too many indices for tensor of dimension ", self_.dim(), " (got ", orig.size(),
                    ")");
  std::vector<at::Tensor> indices =
      at::native::expandTensors(self_, orig, /*ensure_same_device=*/true);
  try {
    indices = at::expand_outplace(indices);
  } catch (std::exception&) {
    TORCH_CHECK_INDEX(
        false, "shape mismatch: indexing tensors could not be broadcast together with shapes ",
        at::native::shapes_as_str(indices));
  }
  while (indices.size() < static_cast<size_t>(self_.dim())) indices.emplace_back();
  at::Tensor self = self_;
  if (!at::native::hasContiguousSubspace(indices)) {
    std::tie(self, indices) = at::native::transposeToFront(self, indices);
  }
  Advanced a;
  a.self = self;
  int64_t dim = 0;
  while (dim < self.dim() && !indices[dim].defined()) ++dim;
  a.before = dim;
  for (int64_t i = 0; i < dim; ++i) a.shape.push_back(self.size(i));
  at::IntArrayRef index_shape;
  for (int64_t i = dim; i < self.dim() && indices[i].defined(); ++i) {
    a.indices.push_back(indices[i]);
    index_shape = indices[i].sizes();
  }
  a.shape.insert(a.shape.end(), index_shape.begin(), index_shape.end());
  for (int64_t i = a.before + a.indices.size(); i < self.dim(); ++i)
    a.shape.push_back(self.size(i));
  // A dimension of size 0 with a non-empty index is still an out-of-range index.
  for (size_t k = 0; k < a.indices.size(); ++k) {
    const int64_t d = a.before + k;
    checkIndexRange(a.indices[k], self.size(d), true, d, nullptr, true);
  }
  return a;
}

// The descriptor of an advanced-indexing problem: `other` (the result or the values) has the
// result's shape; the indices pick elements of a.self (source for index, destination for
// index_put).
kernels::IndexDesc advancedDesc(const Advanced& a, const at::Tensor& other, bool self_is_dst) {
  const int64_t n = static_cast<int64_t>(a.shape.size());
  const int64_t nidx = static_cast<int64_t>(a.indices.size());
  const int64_t index_ndim = n - (a.self.dim() - nidx);
  std::vector<int64_t> self_strides(n, 0);
  for (int64_t i = 0; i < a.before; ++i) self_strides[i] = a.self.stride(i);
  const int64_t after = a.self.dim() - a.before - nidx;
  for (int64_t i = 0; i < after; ++i)
    self_strides[n - after + i] = a.self.stride(a.before + nidx + i);
  std::vector<IndexOperand> idx;
  std::vector<int64_t> sizes, strides;
  for (int64_t k = 0; k < nidx; ++k) {
    std::vector<int64_t> s(n, 0);
    for (int64_t j = 0; j < index_ndim; ++j) s[a.before + j] = a.indices[k].stride(j);
    idx.push_back({a.indices[k], s});
    sizes.push_back(a.self.size(a.before + k));
    strides.push_back(a.self.stride(a.before + k));
  }
  IndexOperand self_op{a.self, self_strides};
  IndexOperand other_op{other, other.strides().vec()};
  if (self_is_dst) return makeIndexDesc(a.shape, {self_op, other_op}, idx, sizes, strides, 0);
  return makeIndexDesc(a.shape, {other_op, self_op}, idx, sizes, strides, 1);
}

using IndexList = c10::List<std::optional<at::Tensor>>;

// A complex self is indexed as its real view: the indices pick leading dimensions, so each
// picks both parts.
bool nativeIndices(const at::Tensor& self, const IndexList& indices) {
  return writesNatively(self) && indices.size() <= static_cast<size_t>(kernels::kMaxIndexTensors);
}

// The real view of a complex self has one more dimension, which no index may reach.
void checkComplexIndexDims(const at::Tensor& self, const IndexList& indices) {
  int64_t consumed = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> index = indices.get(i);
    const bool mask = index && index->defined() &&
                      (index->scalar_type() == at::kBool || index->scalar_type() == at::kByte);
    consumed += mask ? index->dim() : 1;
  }
  TORCH_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim(),
                    " (got ", consumed, ")");
}

// self[indices] into the result of `out`; the kernel also reads `reads`.
at::Tensor indexInto(const at::Tensor& self, const IndexList& indices, const Output& out,
                     std::initializer_list<at::TensorBase> reads) {
  const bool complex = self.is_complex();
  if (complex) checkComplexIndexDims(self, indices);
  Advanced a = advancedIndex(complex ? realView(self) : self, indices);
  std::vector<int64_t> shape = a.shape;
  if (complex) shape.pop_back();  // the parts' dimension
  at::Tensor result = out.allocate(shape, self.options(), Output::DTypeRule::Exact,
                                   /*contiguous=*/true);
  out.checkNoOverlap(reads);
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> index = indices.get(i);
    if (index && index->defined()) out.checkNoOverlap({*index});
  }
  if (result.numel() > 0) {
    launch(advancedDesc(a, complex ? at::view_as_real(result) : result, false), IndexMode::Copy, 0,
           result);
  }
  return out.finish(result);
}

struct Index {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const IndexList& indices) {
    return nativeIndices(self, indices);
  }
  static at::Tensor compute(const at::Tensor& self, const IndexList& indices, const Output& out) {
    return indexInto(self, indices, out, {self});
  }
};

struct IndexPut {
  static constexpr bool kComplex = true;
  static bool native(at::Tensor& self, const IndexList& indices, const at::Tensor& values, bool,
                     bool) {
    return nativeIndices(self, indices) && (nativeSelf(values) || movesComplex(values));
  }
  static at::Tensor& compute(at::Tensor& self, const IndexList& indices, const at::Tensor& values_,
                             bool accumulate, bool unsafe) {
    TORCH_CHECK_INDEX(self.scalar_type() == values_.scalar_type(),
                      "Index put requires the source and destination dtypes match, got ",
                      self.scalar_type(), " for the destination and ", values_.scalar_type(),
                      " for the source.");
    // A complex self takes its values as real views: an accumulation adds part to part.
    const bool complex = self.is_complex();
    if (complex) checkComplexIndexDims(self, indices);
    Advanced a = advancedIndex(complex ? at::view_as_real(self) : self, indices);
    std::vector<int64_t> shape = a.shape;
    if (complex) shape.pop_back();
    at::Tensor values = onDevice(values_, self);
    TORCH_CHECK(at::is_expandable_to(values.sizes(), shape),
                "shape mismatch: value tensor of shape ", values.sizes(),
                " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(shape));
    values = values.expand(shape);
    // Values that share memory with self are read before any write lands.
    if (values.numel() > 0 && values.is_alias_of(self)) values = values.clone();
    if (complex) values = realView(values);
    launch(advancedDesc(a, values, true), accumulate ? IndexMode::Add : IndexMode::Copy, 1, self);
    return self;
  }
};

// masked_select: self[mask] after broadcasting the two together.
struct MaskedSelect {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self, const at::Tensor&) { return writesNatively(self); }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& mask, const Output& out) {
    TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
    const at::Tensor mask_here = onDevice(mask, self);
    auto [s, m] = at::expand_outplace(self, mask_here);
    IndexList indices;
    indices.push_back(atLeast1d(*m));  // a 0-dim pair selects like a 1-element one
    return indexInto(atLeast1d(*s), indices, out, {self, mask});
  }
};

// masked_scatter_: self's elements where mask is set take source's in order. Element i takes
// source[(number of set elements up to i) - 1], read with index_select, whose bounds check
// raises when source is too short.
struct MaskedScatter {
  static constexpr bool kComplex = true;
  static bool native(at::Tensor& self, const at::Tensor&, const at::Tensor& source) {
    return (nativeSelf(self) || movesComplex(self)) && source.device() == self.device();
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
    TORCH_CHECK(self.scalar_type() == source.scalar_type(),
                "masked_scatter_: expected self and source to have same dtypes but got",
                self.scalar_type(), " and ", source.scalar_type());
    TORCH_CHECK(mask.scalar_type() == at::kBool,
                "masked_scatter_ only supports boolean masks, but got mask with dtype ",
                mask.scalar_type());
    const at::Tensor mask_here = onDevice(mask, self);
    const at::Tensor m = at::expand_inplace(self, mask_here, "masked_scatter_")->reshape({-1});
    if (self.numel() == 0) return self;
    const at::Tensor src = source.reshape({-1});
    if (src.numel() == 0) {
      TORCH_CHECK(!m.any().item<bool>(), "Number of elements of source < number of ones in mask");
      return self;
    }
    const at::Tensor position = m.cumsum(0).sub_(1).clamp_min_(0);
    self.copy_(at::where(m, src.index_select(0, position), self.reshape({-1})).view(self.sizes()));
    return self;
  }
};

// ---- take / put_ / repeat_interleave ------------------------------------------------------
// Over self as a flat tensor in its logical order; a negative index counts from the end. Out of
// range indices are index_select's / index_put_'s IndexError.

at::Tensor flatIndex(const at::Tensor& self, const at::Tensor& index, const char* op) {
  TORCH_CHECK(index.scalar_type() == at::kLong, op,
              "(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK_INDEX(self.numel() > 0 || index.numel() == 0, op,
                    "(): tried to take from an empty tensor");
  const at::Tensor flat = index.reshape({-1});
  return at::where(flat < 0, flat + self.numel(), flat);
}

struct Take {
  static bool native(const at::Tensor& self, const at::Tensor&) {
    return kernelKnows(self.scalar_type());
  }
  static at::Tensor compute(const at::Tensor& self, const at::Tensor& index, const Output& out) {
    TORCH_CHECK(self.device() == index.device(),
                "take(): self and index must be on the same device");
    out.checkNoOverlap({self, index});
    const at::Tensor picked =
        self.reshape({-1}).index_select(0, flatIndex(self, index, "take")).view(index.sizes());
    return into(out, picked);
  }
};

struct Put {
  static bool native(const at::Tensor& self, const at::Tensor&, const at::Tensor& source, bool) {
    return kernelKnows(self.scalar_type()) && source.scalar_type() == self.scalar_type();
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                             bool accumulate) {
    TORCH_CHECK_INDEX(index.numel() == source.numel(),
                      "put_(): Expected source and index to have the same number of elements, "
                      "but got source.numel() = ",
                      source.numel(), ", index.numel() = ", index.numel());
    const at::Tensor position = flatIndex(self, index, "put_");
    at::Tensor flat = self.is_contiguous() ? self.view({-1}) : self.contiguous().view({-1});
    flat.index_put_({position}, source.reshape({-1}), accumulate);
    if (!flat.is_alias_of(self)) self.copy_(flat.view(self.sizes()));
    return self;
  }
};

// The indices 0, 1, ... each repeated repeats[i] times: position j of the result is the number
// of cumulative repeats at or below j. The length is read from the device (a sync, as on CUDA)
// unless output_size gives it.
struct RepeatInterleave {
  static bool native(const at::Tensor& repeats, std::optional<c10::SymInt>) {
    return repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt;
  }
  static at::Tensor compute(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
    TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
    const at::Tensor ends = repeats.cumsum(0, at::kLong);
    int64_t total = 0;
    if (output_size) {
      total = output_size->expect_int();
    } else if (repeats.numel() > 0) {
      const at::Tensor summary = at::stack({repeats.min().to(at::kLong), ends[-1]}).cpu();
      TORCH_CHECK(summary[0].item<int64_t>() >= 0, "repeats can not be negative");
      total = summary[1].item<int64_t>();
    }
    const at::Tensor positions = at::arange(total, ends.options());
    return at::searchsorted(ends, positions, repeats.scalar_type() == at::kInt, /*right=*/true);
  }
};

// The gradient of x.unfold(dim, size, step): each window's entries added back at the positions
// they were read from (overlapping windows add up), one index_add_ over the flattened windows.
struct UnfoldBackward {
  static bool native(const at::Tensor& grad, c10::SymIntArrayRef, int64_t, int64_t, int64_t) {
    return kernelKnows(grad.scalar_type());
  }
  static at::Tensor compute(const at::Tensor& grad, c10::SymIntArrayRef input_sizes, int64_t dim,
                            int64_t size, int64_t step) {
    const std::vector<int64_t> sizes = C10_AS_INTARRAYREF_SLOW(input_sizes).vec();
    if (sizes.empty()) return grad.reshape({}).clone();  // a 0-dim input's one window
    const int64_t d = c10::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
    // grad broadcasts to the unfolded shape, as in CPU's TensorIterator (torch._refs.istft
    // passes a window of batch 1 for a batch of frames).
    std::vector<int64_t> unfolded = sizes;
    unfolded[d] = (sizes[d] - size) / step + 1;
    unfolded.push_back(size);
    const at::Tensor windows =
        grad.expand(at::infer_size(unfolded, grad.sizes())).movedim(d, -2);  // [..., frames, size]
    const int64_t frames = windows.size(-2);
    const at::TensorOptions index = grad.options().dtype(at::kLong);
    const at::Tensor position =
        (at::arange(frames, index).unsqueeze(1) * step + at::arange(size, index).unsqueeze(0))
            .reshape({-1});
    std::vector<int64_t> moved = sizes;
    moved.erase(moved.begin() + d);
    moved.push_back(sizes[d]);
    at::Tensor result = at::zeros(moved, grad.options());
    result.index_add_(-1, position, windows.flatten(-2));
    return result.movedim(-1, d).contiguous();
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<Gather>(m, "gather", nullptr, "gather.out");
  registerForms<ScatterSrc<IndexMode::Copy>>(m, "scatter.src", "scatter_.src", "scatter.src_out");
  registerForms<ScatterValue>(m, "scatter.value", "scatter_.value", "scatter.value_out");
  registerForms<ScatterSrc<IndexMode::Add>>(m, "scatter_add", "scatter_add_", "scatter_add.out");
  registerForms<ScatterReduce>(m, "scatter.reduce", "scatter_.reduce", "scatter.reduce_out");
  registerForms<ScatterValueReduce>(m, "scatter.value_reduce", "scatter_.value_reduce",
                                    "scatter.value_reduce_out");
  registerForms<ScatterReduceTwo>(m, "scatter_reduce.two", "scatter_reduce_.two",
                                  "scatter_reduce.two_out");
  registerForms<IndexSelect>(m, "index_select", nullptr, "index_select.out");
  registerForms<IndexAdd>(m, "index_add", "index_add_", "index_add.out");
  registerForms<IndexReduce>(m, "index_reduce", "index_reduce_", "index_reduce.out");
  registerForms<IndexCopy>(m, "index_copy", "index_copy_", "index_copy.out");
  registerNative<IndexFill>(m, "index_fill_.int_Scalar");
  registerNative<IndexFillTensor>(m, "index_fill_.int_Tensor");
  registerForms<MaskedSelect>(m, "masked_select", nullptr, "masked_select.out");
  registerNative<MaskedScatter>(m, "masked_scatter_");
  registerNative<EmbeddingDenseBackward>(m, "embedding_dense_backward");
  registerNative<EmbeddingRenorm>(m, "embedding_renorm_");
  registerForms<Index>(m, "index.Tensor", nullptr, "index.Tensor_out");
  registerNative<IndexPut>(m, "_index_put_impl_");
  registerForms<Take>(m, "take", nullptr, "take.out");
  registerNative<Put>(m, "put_");
  registerNative<RepeatInterleave>(m, "repeat_interleave.Tensor");
  registerNative<UnfoldBackward>(m, "unfold_backward");
}

}  // namespace
}  // namespace accel
