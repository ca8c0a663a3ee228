// Runs an elementwise functor for the CUDA driver: grid-stride kernels on the stream's
// cudaStream_t. Only this file knows how CUDA kernels are launched.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "runtime/cuda/cuda_stream.h"
#include "kernels/elementwise.h"

namespace accel::kernels::cuda {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; the grid-stride loop covers the rest.
constexpr int64_t kMaxBlocks = 1 << 16;

template <class F, class Out, class... In>
__global__ void denseKernel(int64_t n, F f, Out* out, const In*... in) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    contiguousAt(f, i, out, in...);
}

template <class F, class Out, class... In>
__global__ void stridedKernel(ElementwiseDesc d, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < d.numel;
       i += step) {
    int64_t off[1 + sizeof...(In)];
    offsetsOf(d, i, off);
    stridedAt<F, Out, In...>(f, d, off);
  }
}

inline rt::Error fromCuda(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return rt::Error::Success;
    case cudaErrorMemoryAllocation:
      return rt::Error::OutOfMemory;
    case cudaErrorInvalidDevice:
      return rt::Error::InvalidDevice;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidResourceHandle:
      return rt::Error::InvalidValue;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
      return rt::Error::NotSupported;
    default:
      return rt::Error::LaunchFailure;
  }
}

struct CudaExecutor {
  template <class Out, class... In, class F>
  static rt::Error run(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
    if (d.numel == 0) return rt::Error::Success;
    // Plugin code cannot call rt::driver() (the plugin is loaded RTLD_LOCAL): the stream
    // handle itself says which device and cudaStream_t to launch on.
    const rt::cuda::CudaStream* s = rt::cuda::toCudaStream(stream);
    if (cudaError_t err = cudaSetDevice(s->device); err != cudaSuccess) return fromCuda(err);
    cudaStream_t native = s->handle;
    const auto blocks =
        static_cast<unsigned>(std::min<int64_t>((d.numel + kThreads - 1) / kThreads, kMaxBlocks));
    constexpr bool typed = !std::is_same_v<Out, AnyDType> && (!std::is_same_v<In, AnyDType> && ...);
    if constexpr (typed) {
      if (isContiguous(d)) {
        launchDense<F, Out, In...>(blocks, native, d, f, std::index_sequence_for<In...>{});
        return fromCuda(cudaGetLastError());
      }
    }
    stridedKernel<F, Out, In...><<<blocks, kThreads, 0, native>>>(d, f);
    return fromCuda(cudaGetLastError());
  }

 private:
  template <class F, class Out, class... In, size_t... I>
  static void launchDense(unsigned blocks, cudaStream_t native, const ElementwiseDesc& d,
                          const F& f, std::index_sequence<I...>) {
    denseKernel<F, Out, In...><<<blocks, kThreads, 0, native>>>(
        d.numel, f, typedData<Out>(d, 0), typedData<const In>(d, I + 1)...);
  }
};

}  // namespace accel::kernels::cuda
