// The CUDA build's entry points, one per kernel family (each in its own .cu, which is where
// that family's templates are instantiated for the GPU).
#pragma once

#include "kernels/kernel_abi.h"

namespace accel::kernels::cuda {

rt::Error copy(const ElementwiseDesc& d, rt::Stream stream);
rt::Error fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
rt::Error binary(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream);
rt::Error binary_scalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream);

}  // namespace accel::kernels::cuda
