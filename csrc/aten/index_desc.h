// Shared by the indexing ops: building the kernels' IndexDesc from tensors laid over one
// iteration shape, and validating index values before a kernel dereferences them.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "kernels/index.h"

namespace accel {

// An operand of an indexing problem: the tensor and its strides (in elements) over the
// iteration shape; a stride of 0 broadcasts (or marks a dimension the indices pick).
struct IndexOperand {
  at::Tensor tensor;
  std::vector<int64_t> strides;
};

// Strides of `t` with dimension `dim` set to 0 (the dimension an index replaces).
std::vector<int64_t> stridesWithout(const at::Tensor& t, int64_t dim);
// Strides over a shape of `ndim` dims for a 1-D (or 0-d) index along `dim`.
std::vector<int64_t> alongDim(const at::Tensor& index, int64_t ndim, int64_t dim);

// shape: the iteration shape (outermost first); ops: destination then source (if any);
// indices with, per index, the indexed dimension's size and stride (elements) in ops[indexed].
kernels::IndexDesc makeIndexDesc(at::IntArrayRef shape, const std::vector<IndexOperand>& ops,
                                 const std::vector<IndexOperand>& indices,
                                 const std::vector<int64_t>& dim_sizes,
                                 const std::vector<int64_t>& dim_strides, int indexed_operand);

// A one-operand descriptor of `t`, dimensions outermost first (not coalesced).
kernels::ElementwiseDesc rowMajorDesc(const at::Tensor& t);

// The min and max of an integer index tensor on the device. Synchronises: one 16-byte copy.
// The price of raising PyTorch's own error at the call site, with the process and the device
// left usable, instead of a sticky device error (host) or a skipped write (CUDA) later on.
std::pair<int64_t, int64_t> indexRange(const at::Tensor& index);

// Raises unless every value of `index` lies in [0, size), or [-size, size) when
// allow_negative. `what` is the op's message; for gather-style messages pass nullptr and the
// offending value, dim and size are named.
void checkIndexRange(const at::Tensor& index, int64_t size, bool allow_negative, int64_t dim,
                     const char* what, bool index_error);

// While one lives on this thread, checkIndexRange trusts the indices and skips its sync: for
// composites whose indices are in range by construction (padding, upsampling). The kernels
// still refuse a bad index, as a device error.
class IndicesInRange {
 public:
  IndicesInRange();
  ~IndicesInRange();
  IndicesInRange(const IndicesInRange&) = delete;
  IndicesInRange& operator=(const IndicesInRange&) = delete;
};

}  // namespace accel
