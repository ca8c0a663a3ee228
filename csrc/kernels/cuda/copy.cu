#include "kernels/copy.h"

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace accel::kernels::cuda {

rt::Error copy(const ElementwiseDesc& d, rt::Stream stream) {
  return launchCopy<CudaExecutor>(d, stream);
}

}  // namespace accel::kernels::cuda
