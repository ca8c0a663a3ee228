#include "aten/index_desc.h"

#include <ATen/ops/empty.h>

#include "aten/elementwise_desc.h"
#include "core/graph.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/index.h"

namespace accel {

std::vector<int64_t> stridesWithout(const at::Tensor& t, int64_t dim) {
  std::vector<int64_t> s(t.strides().begin(), t.strides().end());
  if (s.empty()) s.push_back(0);  // a 0-dim tensor seen as one dimension of size 1
  s[dim] = 0;
  return s;
}

std::vector<int64_t> alongDim(const at::Tensor& index, int64_t ndim, int64_t dim) {
  std::vector<int64_t> s(std::max<int64_t>(ndim, 1), 0);
  s[dim] = index.dim() == 0 ? 0 : index.stride(0);
  return s;
}

namespace {

void fillOperand(kernels::Operand& op, const IndexOperand& src, at::IntArrayRef shape) {
  op.data = static_cast<char*>(src.tensor.data_ptr());
  op.dtype = toKernelDType(src.tensor.scalar_type());
  const int64_t item = src.tensor.element_size();
  const int64_t n = static_cast<int64_t>(shape.size());
  TORCH_INTERNAL_ASSERT(static_cast<int64_t>(src.strides.size()) >= n);
  for (int64_t i = 0; i < n; ++i) op.strides[i] = src.strides[n - 1 - i] * item;
}

}  // namespace

kernels::IndexDesc makeIndexDesc(at::IntArrayRef shape, const std::vector<IndexOperand>& ops,
                                 const std::vector<IndexOperand>& indices,
                                 const std::vector<int64_t>& dim_sizes,
                                 const std::vector<int64_t>& dim_strides, int indexed_operand) {
  TORCH_CHECK(shape.size() <= static_cast<size_t>(kernels::kMaxDims), "accel: too many dimensions");
  TORCH_CHECK_INDEX(indices.size() <= static_cast<size_t>(kernels::kMaxIndexTensors),
                    "accel: at most ", kernels::kMaxIndexTensors, " index tensors");
  kernels::IndexDesc d;
  d.iter.ndim = static_cast<int>(shape.size());
  d.iter.numel = 1;
  for (int i = 0; i < d.iter.ndim; ++i) {
    d.iter.sizes[i] = shape[d.iter.ndim - 1 - i];
    d.iter.numel *= d.iter.sizes[i];
  }
  d.iter.noperands = static_cast<int>(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) fillOperand(d.iter.op[k], ops[k], shape);
  d.indexed_operand = indexed_operand;
  d.nindex = static_cast<int>(indices.size());
  const int64_t item = ops[indexed_operand].tensor.element_size();
  for (size_t k = 0; k < indices.size(); ++k) {
    fillOperand(d.index[k], indices[k], shape);
    d.dim_size[k] = dim_sizes[k];
    d.dim_stride[k] = dim_strides[k] * item;
  }
  return d;
}

kernels::ElementwiseDesc rowMajorDesc(const at::Tensor& t) {
  TORCH_CHECK(t.dim() <= kernels::kMaxDims, "accel: too many dimensions");
  kernels::ElementwiseDesc d;
  d.ndim = static_cast<int>(t.dim());
  d.numel = t.numel();
  d.noperands = 1;
  d.op[0].data = static_cast<char*>(t.data_ptr());
  d.op[0].dtype = toKernelDType(t.scalar_type());
  for (int i = 0; i < d.ndim; ++i) {
    d.sizes[i] = t.size(i);
    d.op[0].strides[i] = t.stride(i) * t.element_size();
  }
  return d;
}

std::pair<int64_t, int64_t> indexRange(const at::Tensor& index) {
  at::Tensor minmax = at::empty({2}, index.options().dtype(at::kLong));
  const int device = index.device().index();
  const rt::Stream stream = currentRuntimeStream(device);
  const kernels::ElementwiseDesc d = rowMajorDesc(index);
  const at::Tensor workspace = at::empty({kernels::indexTable().compact_workspace_bytes(d, stream)},
                                         index.options().dtype(at::kByte));
  ACCEL_RT_CHECK(
      kernels::indexTable().index_bounds(d, minmax.data_ptr<int64_t>(),
                                         static_cast<char*>(workspace.data_ptr()), stream),
      device);
  at::Tensor host = minmax.cpu();
  return {host.data_ptr<int64_t>()[0], host.data_ptr<int64_t>()[1]};
}

namespace {
thread_local int indices_in_range = 0;
}  // namespace

IndicesInRange::IndicesInRange() { ++indices_in_range; }
IndicesInRange::~IndicesInRange() { --indices_in_range; }

void checkIndexRange(const at::Tensor& index, int64_t size, bool allow_negative, int64_t dim,
                     const char* what, bool index_error) {
  if (index.numel() == 0 || indices_in_range > 0) return;
  // A graph capture cannot read the range back; the kernels then refuse bad indices
  // themselves, as a sticky device error (CUDA's device-side assert).
  if (isStreamCapturing(currentStream(index.device().index()))) return;
  auto [lo, hi] = indexRange(index);
  const int64_t floor = allow_negative ? -size : 0;
  if (lo >= floor && hi < size) return;
  const int64_t bad = lo < floor ? lo : hi;
  if (what != nullptr) {
    TORCH_CHECK_INDEX(!index_error, what);
    TORCH_CHECK(false, what);
  }
  TORCH_CHECK_INDEX(!index_error, "index ", bad, " is out of bounds for dimension ", dim,
                    " with size ", size);
  TORCH_CHECK(false, "index ", bad, " is out of bounds for dimension ", dim, " with size ", size);
}

}  // namespace accel
