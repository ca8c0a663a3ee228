// The host build's entry points, one per kernel family (each in its own .cpp, which is where
// that family's templates are instantiated for the host).
#pragma once

#include "kernels/kernel_abi.h"

namespace accel::kernels::host {

rt::Error copy(const ElementwiseDesc& d, rt::Stream stream);
rt::Error fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
rt::Error binary(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream);
rt::Error binary_scalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream);
rt::Error unary(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p, rt::Stream stream);
rt::Error compare(CompareOp op, const ElementwiseDesc& d, rt::Stream stream);
rt::Error compare_scalar(CompareOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream);
rt::Error ternary(TernaryOp op, const ElementwiseDesc& d, Scalar value, rt::Stream stream);
rt::Error masked_fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
rt::Error amp_unscale(const ElementwiseDesc& d, float* found_inf, const float* inv_scale, rt::Stream stream);
rt::Error amp_update_scale(const ElementwiseDesc& d, int32_t* growth_tracker, const float* found_inf, double growth_factor, double backoff_factor, int64_t growth_interval, rt::Stream stream);

}  // namespace accel::kernels::host
