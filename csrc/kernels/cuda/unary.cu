#include "kernels/unary.h"

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace accel::kernels::cuda {

rt::Error unary(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p, rt::Stream stream) {
  return launchUnary<CudaExecutor>(op, d, p, stream);
}

}  // namespace accel::kernels::cuda
