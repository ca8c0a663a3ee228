#include "kernels/fill.h"

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace accel::kernels::cuda {

rt::Error fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  return launchFill<CudaExecutor>(d, value, stream);
}

}  // namespace accel::kernels::cuda
