// The im2col family on the CUDA driver: a thread per output element, grid-stride.
#include "kernels/im2col.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

template <class F>
__global__ void rowsKernel(int64_t rows, int64_t width, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * width;
       i += step) {
    const int64_t q = i % width;
    f(i / width, q, q + 1);
  }
}

struct Im2colExecutor : Executor {
  static constexpr int kCol2imChunk = 1;

  template <class F>
  static rt::Error forRows(int64_t rows, int64_t width, const F& f, rt::Stream stream) {
    const int64_t n = rows * width;
    if (n == 0) return rt::Error::Success;
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    const auto blocks = static_cast<unsigned>(threadGrid(n));
    rowsKernel<<<blocks, kThreads, 0, native>>>(rows, width, f);
    return rt::cuda::checkLaunch("rowsKernel");
  }
};

}  // namespace

const Im2colTable& im2colTable() {
  static const Im2colTable table = Im2colTable::make<Im2colExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
