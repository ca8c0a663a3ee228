#include "kernels/compare.h"

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace accel::kernels::cuda {

rt::Error compare(CompareOp op, const ElementwiseDesc& d, rt::Stream stream) {
  return launchCompare<CudaExecutor>(op, d, stream);
}

rt::Error compare_scalar(CompareOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream) {
  return launchCompareScalar<CudaExecutor>(op, d, rhs, stream);
}

}  // namespace accel::kernels::cuda
