// The indexing family's kernel ABI: gather/scatter-style indexed copies (gather, scatter,
// index_select, index_add, index, index_put, embedding backward), index bounds, nonzero,
// triu/tril and arange. Knows no torch.
#pragma once

#include <cstdint>

#include "kernels/kernel_abi.h"

namespace accel::kernels {

// Index tensors of one advanced-indexing call (x[i0, i1, ...]); more is rejected by the aten
// layer before it gets here.
constexpr int kMaxIndexTensors = 8;

// An indexed copy over the iteration space `iter` (TensorIterator order, innermost first).
// iter.op[0] is the destination, iter.op[1] the source (absent for IndexMode::Fill). The
// indexed operand's indexed dimensions are restrided to 0 in `iter`; element i of it lives at
//   data + offset(i) + sum_k wrap(index_k[i]) * dim_stride[k]
// where wrap() adds dim_size[k] to a negative index. An index outside [-size, size) is never
// dereferenced (the aten layer validated it first; the kernel skips it or raises).
struct IndexDesc {
  ElementwiseDesc iter;
  int indexed_operand = 1;  // 0: the indices pick destination elements, 1: source elements
  int nindex = 0;
  Operand index[kMaxIndexTensors];  // Int64 or Int32, strides (bytes) over iter's dimensions
  int64_t dim_size[kMaxIndexTensors] = {};
  int64_t dim_stride[kMaxIndexTensors] = {};  // bytes, in the indexed operand
};

enum class IndexMode : int {
  Copy,  // dst = src
  Add,   // dst += alpha * src, duplicates accumulate (atomics on CUDA, one thread on host)
  Fill,  // dst = value
};

struct IndexTable {
  // The indexed copy. `scalar` is alpha for Add and the value for Fill. Source and
  // destination have the same dtype.
  rt::Error (*index)(const IndexDesc& d, IndexMode mode, Scalar scalar, rt::Stream stream);
  // minmax[0] = min, minmax[1] = max of the index operand d.op[0] (Int64 or Int32), written to
  // device memory; an empty index writes {INT64_MAX, INT64_MIN}.
  rt::Error (*index_bounds)(const ElementwiseDesc& d, int64_t* minmax, rt::Stream stream);
  // count[0] = number of nonzero elements of d.op[0] (device memory).
  rt::Error (*nonzero_count)(const ElementwiseDesc& d, int64_t* count, rt::Stream stream);
  // Writes the coordinates of the nonzero elements of d.op[0] in row-major order, as rows of
  // d.ndim int64 values. Here d's dimensions are the tensor's, OUTERMOST first (not coalesced).
  rt::Error (*nonzero)(const ElementwiseDesc& d, int64_t* out, rt::Stream stream);
  // out = in where (col - row) >= diagonal (upper, triu) or <= diagonal (lower, tril), else 0.
  // d.op[0] out, d.op[1] in, same dtype; dimension 0 is the column, 1 the row (not coalesced).
  rt::Error (*triangle)(const ElementwiseDesc& d, int64_t diagonal, bool upper,
                        rt::Stream stream);
  // out[i] = start + i * step, for i in iteration order (d.op[0] one-dimensional).
  rt::Error (*arange)(const ElementwiseDesc& d, Scalar start, Scalar step, rt::Stream stream);
};

const IndexTable& indexTable();
const IndexTable& hostIndexTable();

}  // namespace accel::kernels
