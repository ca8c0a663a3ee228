// The host build's BLAS entry points (csrc/kernels/host/blas.cpp).
#pragma once

#include "kernels/blas_abi.h"

namespace accel::kernels::host {

rt::Error gemm(const GemmDesc& d, rt::Stream stream);

}  // namespace accel::kernels::host
