#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/random.h"

namespace accel::kernels::cuda {
namespace {

__global__ void randomKernel(RandomDesc d, int64_t groups) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += step)
    randomGroup(d, g);
}

rt::Error randomFill(const RandomDesc& d, rt::Stream stream) {
  const int64_t groups = randomGroups(d);
  if (groups == 0) return rt::Error::Success;
  const rt::cuda::CudaStream* s = rt::cuda::toCudaStream(stream);
  if (cudaError_t err = cudaSetDevice(s->device); err != cudaSuccess) return fromCuda(err);
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((groups + kThreads - 1) / kThreads, kMaxBlocks));
  randomKernel<<<blocks, kThreads, 0, s->handle>>>(d, groups);
  return fromCuda(cudaGetLastError());
}

}  // namespace
}  // namespace accel::kernels::cuda

// Looked up by kernels::randomTable() through rt::cudaPluginSymbol.
extern "C" const accel::kernels::RandomTable* accel_cuda_random_table() {
  static const accel::kernels::RandomTable table{&accel::kernels::cuda::randomFill};
  return &table;
}
