// The indexing family on the CUDA driver: grid-stride kernels; accumulations use atomics;
// the reductions and nonzero's ordered compaction run in one block (index and mask tensors
// are small next to the data they index).
#include "kernels/index.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

__global__ void minMaxKernel(ElementwiseDesc d, int64_t* minmax) {
  __shared__ int64_t lo[kThreads], hi[kThreads];
  int64_t l = INT64_MAX, h = INT64_MIN;
  for (int64_t i = threadIdx.x; i < d.numel; i += blockDim.x) {
    const int64_t v = indexAt(d, i);
    l = v < l ? v : l;
    h = v > h ? v : h;
  }
  lo[threadIdx.x] = l;
  hi[threadIdx.x] = h;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      lo[threadIdx.x] = min(lo[threadIdx.x], lo[threadIdx.x + s]);
      hi[threadIdx.x] = max(hi[threadIdx.x], hi[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    minmax[0] = lo[0];
    minmax[1] = hi[0];
  }
}

// Block-wide exclusive scan of one flag per thread (Hillis-Steele in shared memory); returns
// this thread's offset and sets *total.
__device__ int64_t blockScan(int64_t flag, int64_t* buf, int64_t* total) {
  buf[threadIdx.x] = flag;
  __syncthreads();
  for (int s = 1; s < blockDim.x; s *= 2) {
    const int64_t add = threadIdx.x >= s ? buf[threadIdx.x - s] : 0;
    __syncthreads();
    buf[threadIdx.x] += add;
    __syncthreads();
  }
  const int64_t inclusive = buf[threadIdx.x];
  *total = buf[blockDim.x - 1];
  __syncthreads();
  return inclusive - flag;
}

template <class T>
__global__ void countNonzeroKernel(ElementwiseDesc d, int64_t* count) {
  __shared__ int64_t buf[kThreads];
  int64_t c = 0;
  for (int64_t i = threadIdx.x; i < d.numel; i += blockDim.x) c += nonzeroRowMajor<T>(d, i);
  int64_t total;
  blockScan(c, buf, &total);
  if (threadIdx.x == 0) *count = total;
}

template <class T>
__global__ void nonzeroKernel(ElementwiseDesc d, int64_t* out) {
  __shared__ int64_t buf[kThreads];
  int64_t base = 0;
  for (int64_t start = 0; start < d.numel; start += blockDim.x) {
    const int64_t i = start + threadIdx.x;
    const bool hit = i < d.numel && nonzeroRowMajor<T>(d, i);
    int64_t total;
    const int64_t pos = base + blockScan(hit, buf, &total);
    if (hit) writeCoordinates(d, i, out + pos * d.ndim);
    base += total;
  }
}

struct IndexExecutor : Executor {
  static rt::Error minMax(const ElementwiseDesc& d, int64_t* minmax, rt::Stream stream) {
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    minMaxKernel<<<1, kThreads, 0, native>>>(d, minmax);
    return rt::cuda::checkLaunch("minMaxKernel");
  }

  template <class T>
  static rt::Error countNonzero(const ElementwiseDesc& d, int64_t* count, rt::Stream stream) {
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    countNonzeroKernel<T><<<1, kThreads, 0, native>>>(d, count);
    return rt::cuda::checkLaunch("countNonzeroKernel");
  }

  template <class T>
  static rt::Error nonzero(const ElementwiseDesc& d, int64_t* out, rt::Stream stream) {
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    nonzeroKernel<T><<<1, kThreads, 0, native>>>(d, out);
    return rt::cuda::checkLaunch("nonzeroKernel");
  }
};

}  // namespace

const IndexTable& indexTable() {
  static const IndexTable table = IndexTable::make<IndexExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
