#include "kernels/ternary.h"

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace accel::kernels::cuda {

rt::Error ternary(TernaryOp op, const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  return launchTernary<CudaExecutor>(op, d, value, stream);
}

rt::Error masked_fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  return launchMaskedFill<CudaExecutor>(d, value, stream);
}

}  // namespace accel::kernels::cuda
