#include "kernels/binary.h"

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace accel::kernels::cuda {

rt::Error binary(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream) {
  return launchBinary<CudaExecutor>(op, d, alpha, stream);
}

rt::Error binary_scalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream) {
  return launchBinaryScalar<CudaExecutor>(op, d, rhs, stream);
}

}  // namespace accel::kernels::cuda
