// The CUDA build's BLAS entry points (csrc/kernels/cuda/blas.cu).
#pragma once

#include "kernels/blas_abi.h"

namespace accel::kernels::cuda {

rt::Error gemm(const GemmDesc& d, rt::Stream stream);

}  // namespace accel::kernels::cuda
