// Indexing ops: index_select, gather, scatter (src, value, add), index_add, embedding's
// backward, advanced indexing (index.Tensor) and its assignment (_index_put_impl_). Each lays
// the destination, the source and the indices over one iteration shape (the indexed
// dimensions of the indexed operand restrided to 0) and calls the indexing kernel, after
// checking the index values on the device (see checkIndexRange for the price and the reason).
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/IndexingUtils.h>
#include <ATen/native/ScatterGatherChecks.h>
#include <ATen/native/TensorAdvancedIndexingUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/elementwise_desc.h"
#include "aten/fallback.h"
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
  ACCEL_RT_CHECK(kernels::indexTable().index(d, mode, toKernelScalar(scalar),
                                             currentRuntimeStream(device)),
                 device);
}

at::Tensor onDevice(const at::Tensor& t, const at::Tensor& like) {
  return t.device() == like.device() ? t : t.to(like.device());
}

// A 0-dim tensor seen as one dimension of size 1 (the scatter/gather convention).
at::Tensor atLeast1d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

bool supportedDType(const at::Tensor& t) { return kernelSupports(t.scalar_type()); }

// ---- gather / scatter ---------------------------------------------------------------------

void gatherInto(const at::Tensor& out, const at::Tensor& self_, int64_t dim,
                const at::Tensor& index_) {
  at::Tensor self = atLeast1d(self_), index = atLeast1d(onDevice(index_, self_));
  at::Tensor result = atLeast1d(out);
  checkIndexRange(index, self.size(dim), false, dim, nullptr, false);
  auto d = makeIndexDesc(index.sizes(), {{result, result.strides().vec()}, {self, stridesWithout(self, dim)}},
                         {{index, index.strides().vec()}}, {self.size(dim)}, {self.stride(dim)}, 1);
  launch(d, IndexMode::Copy, 0, out);
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool sparse_grad, at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  at::native::scatter_gather_dtype_check("gather", self, index, std::optional<at::Tensor>(out));
  if (index.numel() == 0) {  // like CPU: an empty index needs no matching shape
    out.resize_(index.sizes());
    return out;
  }
  at::native::gather_shape_check(self, dim, index);
  if (!supportedDType(self)) {
    static auto op = findOp("aten::gather", "out");
    return fallbackCall<at::Tensor>(op, self, dim, index, sparse_grad, out), out;
  }
  out.resize_(index.sizes());
  if (index.numel() == 0) return out;
  gatherInto(out, self, dim, index);
  return out;
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  bool sparse_grad) {
  at::Tensor out = at::empty(index.sizes(), self.options());
  return gather_out(self, dim, index, sparse_grad, out);
}

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
  std::vector<IndexOperand> ops{{self, stridesWithout(self, dim)}};
  if (src_.defined()) {
    at::Tensor src = atLeast1d(src_);
    ops.push_back({src, src.strides().vec()});
  }
  auto d = makeIndexDesc(index.sizes(), ops, {{index, index.strides().vec()}}, {self.size(dim)},
                         {self.stride(dim)}, 0);
  launch(d, mode, scalar, self_);
}

template <IndexMode Mode>
at::Tensor& scatter_src_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src) {
  if (!supportedDType(self)) {
    static auto op = findOp(Mode == IndexMode::Add ? "aten::scatter_add_" : "aten::scatter_",
                            Mode == IndexMode::Add ? "" : "src");
    return fallbackCall<at::Tensor>(op, self, dim, index, src), self;
  }
  scatterInto(self, dim, index, src, Mode, 1, Mode == IndexMode::Add ? "scatter_add" : "scatter");
  return self;
}
template <IndexMode Mode>
at::Tensor& scatter_src_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out) {
  if (!out.is_same(self)) {
    out.resize_(self.sizes());
    copyOnDevice(out, self);
  }
  return scatter_src_<Mode>(out, dim, index, src);
}
template <IndexMode Mode>
at::Tensor scatter_src(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& src) {
  at::Tensor out = at::empty_like(self);
  return scatter_src_out<Mode>(self, dim, index, src, out);
}

at::Tensor& scatter_value_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const c10::Scalar& value) {
  if (!supportedDType(self) || value.isComplex()) {
    static auto op = findOp("aten::scatter_", "value");
    return fallbackCall<at::Tensor>(op, self, dim, index, value), self;
  }
  scatterInto(self, dim, index, at::Tensor(), IndexMode::Fill, value, "scatter");
  return self;
}
at::Tensor& scatter_value_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const c10::Scalar& value, at::Tensor& out) {
  if (!out.is_same(self)) {
    out.resize_(self.sizes());
    copyOnDevice(out, self);
  }
  return scatter_value_(out, dim, index, value);
}
at::Tensor scatter_value(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const c10::Scalar& value) {
  at::Tensor out = at::empty_like(self);
  return scatter_value_out(self, dim, index, value, out);
}

// scatter(reduce="add") and scatter_reduce("sum", include_self=True) are scatter_add; the
// other reductions go through the counted fallback.
at::Tensor& scatter_reduce_src_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const at::Tensor& src, c10::string_view reduce) {
  if (reduce != "add" || !supportedDType(self)) {
    static auto op = findOp("aten::scatter_", "reduce");
    return fallbackCall<at::Tensor>(op, self, dim, index, src, reduce), self;
  }
  return scatter_src_<IndexMode::Add>(self, dim, index, src);
}
at::Tensor scatter_reduce_src(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& src, c10::string_view reduce) {
  at::Tensor out = at::empty_like(self);
  copyOnDevice(out, self);
  return scatter_reduce_src_(out, dim, index, src, reduce);
}

at::Tensor& scatter_reduce_two_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce,
                                   bool include_self, at::Tensor& out) {
  if (reduce != "sum" || !include_self || !supportedDType(self)) {
    static auto op = findOp("aten::scatter_reduce", "two_out");
    return fallbackCall<at::Tensor>(op, self, dim, index, src, reduce, include_self, out), out;
  }
  return scatter_src_out<IndexMode::Add>(self, dim, index, src, out);
}
at::Tensor& scatter_reduce_two_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const at::Tensor& src, c10::string_view reduce,
                                bool include_self) {
  return scatter_reduce_two_out(self, dim, index, src, reduce, include_self, self);
}
at::Tensor scatter_reduce_two(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& src, c10::string_view reduce, bool include_self) {
  at::Tensor out = at::empty_like(self);
  return scatter_reduce_two_out(self, dim, index, src, reduce, include_self, out);
}

// ---- index_select / index_add ---------------------------------------------------------

void checkIndexVector(const at::Tensor& index, const char* name) {
  TORCH_CHECK_INDEX(index.dim() <= 1, name, "(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, name,
              "(): Expected dtype int32/int64 for index");
}

at::Tensor& index_select_out(const at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                             at::Tensor& out) {
  checkIndexVector(index_, "index_select");
  dim = at::maybe_wrap_dim(dim, self_.dim());
  TORCH_CHECK(self_.scalar_type() == out.scalar_type(), "index_select(): self and result must have the same scalar type");
  if (!supportedDType(self_)) {
    static auto op = findOp("aten::index_select", "out");
    return fallbackCall<at::Tensor>(op, self_, dim, index_, out), out;
  }
  at::Tensor self = atLeast1d(self_), index = onDevice(index_, self_);
  auto shape = self.sizes().vec();
  shape[dim] = index.numel();
  if (self_.dim() == 0) {
    // A scalar self gives a scalar result, as on CPU.
    out.resize_(index.numel() == 1 ? at::IntArrayRef{} : index.sizes());
  } else {
    out.resize_(shape);
  }
  if (index.numel() == 0 || out.numel() == 0) return out;
  checkIndexRange(index, self.size(dim), false, dim, "index out of range in self", true);
  at::Tensor result = out.view(shape);
  auto d = makeIndexDesc(shape, {{result, result.strides().vec()}, {self, stridesWithout(self, dim)}},
                         {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)},
                         {self.stride(dim)}, 1);
  launch(d, IndexMode::Copy, 0, out);
  return out;
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return index_select_out(self, dim, index, out);
}

at::Tensor& index_add_(at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                       const at::Tensor& source_, const c10::Scalar& alpha) {
  checkIndexVector(index_, "index_add");
  dim = at::maybe_wrap_dim(dim, self_.dim());
  TORCH_CHECK(self_.scalar_type() == source_.scalar_type(),
              "index_add_(): self (", self_.scalar_type(), ") and source (",
              source_.scalar_type(), ") must have the same scalar type");
  if (!supportedDType(self_)) {
    static auto op = findOp("aten::index_add_", "");
    return fallbackCall<at::Tensor>(op, self_, dim, index_, source_, alpha), self_;
  }
  at::Tensor self = atLeast1d(self_), source = atLeast1d(source_);
  at::Tensor index = onDevice(index_, self_);
  TORCH_CHECK(source.dim() == self.dim(), "index_add_(): source and self must have the same number of dimensions");
  TORCH_CHECK(index.numel() == source.size(dim),
              "index_add_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim) (", source.size(dim), ")");
  for (int64_t i = 0; i < self.dim(); ++i) {
    TORCH_CHECK(i == dim || self.size(i) == source.size(i), "index_add_(): self and source must have the same size in every dimension but ", dim);
  }
  if (index.numel() == 0 || source.numel() == 0) return self_;
  checkIndexRange(index, self.size(dim), false, dim, "index out of range in self", true);
  auto d = makeIndexDesc(source.sizes(), {{self, stridesWithout(self, dim)}, {source, source.strides().vec()}},
                         {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)},
                         {self.stride(dim)}, 0);
  launch(d, IndexMode::Add, alpha, self_);
  return self_;
}

at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, const c10::Scalar& alpha, at::Tensor& out) {
  if (!out.is_same(self)) {
    out.resize_(self.sizes());
    copyOnDevice(out, self);
  }
  return index_add_(out, dim, index, source, alpha);
}

at::Tensor index_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const at::Tensor& source, const c10::Scalar& alpha) {
  at::Tensor out = at::empty_like(self);
  return index_add_out(self, dim, index, source, alpha, out);
}

// self.index_copy_(dim, index, source): self[..., index[i], ...] = source[..., i, ...].
at::Tensor& index_copy_(at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                        const at::Tensor& source_) {
  checkIndexVector(index_, "index_copy");
  dim = at::maybe_wrap_dim(dim, self_.dim());
  TORCH_CHECK(self_.scalar_type() == source_.scalar_type(),
              "index_copy_(): self and source expected to have the same dtype, but got (self) ",
              self_.scalar_type(), " and (source) ", source_.scalar_type());
  if (!supportedDType(self_)) {
    static auto op = findOp("aten::index_copy_", "");
    return fallbackCall<at::Tensor>(op, self_, dim, index_, source_), self_;
  }
  at::Tensor self = atLeast1d(self_), source = atLeast1d(source_);
  at::Tensor index = onDevice(index_, self_);
  TORCH_CHECK(source.dim() == self.dim() && index.numel() == source.size(dim),
              "index_copy_(): Source/destination tensor must have same slice shapes and the ",
              "number of indices must equal source.size(dim)");
  for (int64_t i = 0; i < self.dim(); ++i) {
    TORCH_CHECK(i == dim || self.size(i) == source.size(i), "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: ", self.sizes(), " and source slice shape: ", source.sizes());
  }
  if (index.numel() == 0 || source.numel() == 0) return self_;
  checkIndexRange(index, self.size(dim), false, dim, "index_copy_(): index out of bounds", true);
  auto d = makeIndexDesc(source.sizes(), {{self, stridesWithout(self, dim)}, {source, source.strides().vec()}},
                         {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)},
                         {self.stride(dim)}, 0);
  launch(d, IndexMode::Copy, 0, self_);
  return self_;
}

at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, at::Tensor& out) {
  if (!out.is_same(self)) {
    out.resize_(self.sizes());
    copyOnDevice(out, self);
  }
  return index_copy_(out, dim, index, source);
}

at::Tensor index_copy(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& source) {
  at::Tensor out = at::empty_like(self);
  return index_copy_out(self, dim, index, source, out);
}

// self.index_fill_(dim, index, value): every slice index[i] along dim becomes value.
at::Tensor& index_fill_(at::Tensor& self_, int64_t dim, const at::Tensor& index_,
                        const c10::Scalar& value) {
  checkIndexVector(index_, "index_fill_");
  dim = at::maybe_wrap_dim(dim, self_.dim());
  if (!supportedDType(self_) || value.isComplex()) {
    static auto op = findOp("aten::index_fill_", "int_Scalar");
    return fallbackCall<at::Tensor>(op, self_, dim, index_, value), self_;
  }
  at::Tensor self = atLeast1d(self_), index = onDevice(index_, self_);
  if (index.numel() == 0 || self.numel() == 0) return self_;
  checkIndexRange(index, self.size(dim), true, dim, nullptr, true);
  auto shape = self.sizes().vec();
  shape[dim] = index.numel();
  auto d = makeIndexDesc(shape, {{self, stridesWithout(self, dim)}},
                         {{index, alongDim(index, self.dim(), dim)}}, {self.size(dim)},
                         {self.stride(dim)}, 0);
  launch(d, IndexMode::Fill, value, self_);
  return self_;
}

// A 0-dim value tensor is read on the host, as CUDA does.
at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value.dim(), " dimension(s).");
  return index_fill_(self, dim, index, value.item());
}

// ---- embedding ----------------------------------------------------------------------------

at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                    c10::SymInt num_weights, c10::SymInt padding_idx,
                                    bool scale_grad_by_freq) {
  if (scale_grad_by_freq || !supportedDType(grad)) {
    static auto op = findOp("aten::embedding_dense_backward", "");
    return fallbackCall<at::Tensor>(op, grad, indices, num_weights, padding_idx,
                                    scale_grad_by_freq);
  }
  const int64_t rows = num_weights.expect_int();
  const int64_t dim = grad.size(-1);
  at::Tensor grad_weight = at::zeros({rows, dim}, grad.options());
  at::Tensor flat = indices.reshape({-1});
  index_add_(grad_weight, 0, flat, grad.reshape({flat.numel(), dim}), 1);
  // Rows looked up through padding_idx get no gradient: theirs is the only contribution.
  const int64_t pad = padding_idx.expect_int();
  if (pad >= 0 && pad < rows) grad_weight.select(0, pad).zero_();
  return grad_weight;
}

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
  TORCH_CHECK_INDEX(orig.size() <= static_cast<size_t>(self_.dim()), "too many indices for tensor of dimension ",
                    self_.dim(), " (got ", orig.size(), ")");
  std::vector<at::Tensor> indices = at::native::expandTensors(self_, orig, /*ensure_same_device=*/true);
  try {
    indices = at::expand_outplace(indices);
  } catch (std::exception&) {
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ",
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
  for (int64_t i = a.before + a.indices.size(); i < self.dim(); ++i) a.shape.push_back(self.size(i));
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

bool allSupported(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  return supportedDType(self) && indices.size() <= static_cast<size_t>(kernels::kMaxIndexTensors);
}

at::Tensor& index_out(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                      at::Tensor& out) {
  if (!allSupported(self, indices)) {
    static auto op = findOp("aten::index", "Tensor_out");
    return fallbackCall<at::Tensor>(op, self, indices, out), out;
  }
  Advanced a = advancedIndex(self, indices);
  out.resize_(a.shape);
  if (out.numel() == 0) return out;
  if (out.is_contiguous()) {
    launch(advancedDesc(a, out, false), IndexMode::Copy, 0, out);
  } else {
    at::Tensor dense = at::empty(a.shape, self.options());
    launch(advancedDesc(a, dense, false), IndexMode::Copy, 0, dense);
    copyOnDevice(out, dense);
  }
  return out;
}

at::Tensor index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  at::Tensor out = at::empty({0}, self.options());
  return index_out(self, indices, out);
}

at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values_, bool accumulate, bool unsafe) {
  if (!allSupported(self, indices) || !supportedDType(values_)) {
    static auto op = findOp("aten::_index_put_impl_", "");
    return fallbackCall<at::Tensor>(op, self, indices, values_, accumulate, unsafe), self;
  }
  TORCH_CHECK_INDEX(self.scalar_type() == values_.scalar_type(),
                    "Index put requires the source and destination dtypes match, got ",
                    self.scalar_type(), " for the destination and ", values_.scalar_type(),
                    " for the source.");
  Advanced a = advancedIndex(self, indices);
  at::Tensor values = onDevice(values_, self);
  TORCH_CHECK(at::is_expandable_to(values.sizes(), a.shape), "shape mismatch: value tensor of shape ",
              values.sizes(), " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(a.shape));
  values = values.expand(a.shape);
  // Values that share memory with self are read before any write lands.
  if (values.numel() > 0 && values.is_alias_of(self)) values = values.clone();
  launch(advancedDesc(a, values, true), accumulate ? IndexMode::Add : IndexMode::Copy, 1, self);
  return self;
}

// masked_select: self[mask] after broadcasting the two together.
at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  const at::Tensor mask_here = onDevice(mask, self);
  auto [s, m] = at::expand_outplace(self, mask_here);
  c10::List<std::optional<at::Tensor>> indices;
  indices.push_back(atLeast1d(*m));  // a 0-dim pair selects like a 1-element one
  return index_out(atLeast1d(*s), indices, out);
}

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out = at::empty({0}, self.options());
  return masked_select_out(self, mask, out);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("gather", gather);
  m.impl("gather.out", gather_out);
  m.impl("scatter.src", scatter_src<IndexMode::Copy>);
  m.impl("scatter_.src", scatter_src_<IndexMode::Copy>);
  m.impl("scatter.src_out", scatter_src_out<IndexMode::Copy>);
  m.impl("scatter.value", scatter_value);
  m.impl("scatter_.value", scatter_value_);
  m.impl("scatter.value_out", scatter_value_out);
  m.impl("scatter_add", scatter_src<IndexMode::Add>);
  m.impl("scatter_add_", scatter_src_<IndexMode::Add>);
  m.impl("scatter_add.out", scatter_src_out<IndexMode::Add>);
  m.impl("index_select", index_select);
  m.impl("index_select.out", index_select_out);
  m.impl("index_add", index_add);
  m.impl("index_add_", index_add_);
  m.impl("index_add.out", index_add_out);
  m.impl("index_copy", index_copy);
  m.impl("index_copy_", index_copy_);
  m.impl("index_copy.out", index_copy_out);
  m.impl("index_fill_.int_Scalar", index_fill_);
  m.impl("index_fill_.int_Tensor", index_fill_tensor_);
  m.impl("scatter.reduce", scatter_reduce_src);
  m.impl("scatter_.reduce", scatter_reduce_src_);
  m.impl("scatter_reduce.two", scatter_reduce_two);
  m.impl("scatter_reduce_.two", scatter_reduce_two_);
  m.impl("scatter_reduce.two_out", scatter_reduce_two_out);
  m.impl("masked_select", masked_select);
  m.impl("masked_select.out", masked_select_out);
  m.impl("embedding_dense_backward", embedding_dense_backward);
  m.impl("index.Tensor", index);
  m.impl("index.Tensor_out", index_out);
  m.impl("_index_put_impl_", index_put_impl_);
}

}  // namespace
}  // namespace accel
