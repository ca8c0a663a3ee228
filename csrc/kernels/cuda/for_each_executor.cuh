// Runs an index-space functor `bool f(int64_t i)` for the CUDA driver (the indexing and sort
// families): a grid-stride kernel; accumulations use atomics.
#pragma once

#include <cstring>
#include <type_traits>

#include "kernels/cuda/cuda_executor.cuh"
#include "kernels/index.h"

namespace accel::kernels::cuda {

// Read-modify-write of 1- and 2-byte types through a compare-and-swap of their aligned word.
template <class T>
__device__ void casAccumulate(T* p, OpMath<T> v) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
  const unsigned byte = addr & 3;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    T cur;
    memcpy(&cur, reinterpret_cast<const char*>(&assumed) + byte, sizeof(T));
    const T next = castTo<T>(castTo<OpMath<T>>(cur) + v);
    unsigned int replacement = assumed;
    memcpy(reinterpret_cast<char*>(&replacement) + byte, &next, sizeof(T));
    old = atomicCAS(word, assumed, replacement);
  } while (assumed != old);
}

struct AtomicAccumulate {
  template <class T>
  __device__ static void add(T* p, OpMath<T> v) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t>) {
      atomicAdd(p, v);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      // Two's complement: unsigned addition wraps exactly like signed.
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
    } else {
      casAccumulate(p, v);
    }
  }
};

template <class F>
__global__ void forEachKernel(int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  // An out-of-range index is skipped (the aten layer validated the indices beforehand).
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    (void)f(i);
}

// The cudaStream_t behind a runtime stream, with its device made current.
inline rt::Error launchOn(rt::Stream stream, cudaStream_t* native) {
  const rt::cuda::CudaStream* s = rt::cuda::toCudaStream(stream);
  if (cudaError_t err = cudaSetDevice(s->device); err != cudaSuccess) return fromCuda(err);
  *native = s->handle;
  return rt::Error::Success;
}

struct ForEachExecutor {
  using Accumulate = AtomicAccumulate;

  template <class F>
  static rt::Error forEach(int64_t n, bool /*serial: atomics*/, const F& f, rt::Stream stream) {
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    const auto blocks =
        static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
    forEachKernel<<<blocks, kThreads, 0, native>>>(n, f);
    return fromCuda(cudaGetLastError());
  }
};

}  // namespace accel::kernels::cuda
