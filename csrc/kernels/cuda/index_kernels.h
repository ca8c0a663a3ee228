// The CUDA build's entry points of the indexing family (instantiated in index.cu).
#pragma once

#include "kernels/index_abi.h"

namespace accel::kernels::cuda {

rt::Error index(const IndexDesc& d, IndexMode mode, Scalar scalar, rt::Stream stream);
rt::Error index_bounds(const ElementwiseDesc& d, int64_t* minmax, rt::Stream stream);
rt::Error nonzero_count(const ElementwiseDesc& d, int64_t* count, rt::Stream stream);
rt::Error nonzero(const ElementwiseDesc& d, int64_t* out, rt::Stream stream);
rt::Error triangle(const ElementwiseDesc& d, int64_t diagonal, bool upper, rt::Stream stream);
rt::Error arange(const ElementwiseDesc& d, Scalar start, Scalar step, rt::Stream stream);

}  // namespace accel::kernels::cuda
