// The CUDA driver's executor: how every kernel family launches on a GPU, as grid-stride
// kernels on the stream's cudaStream_t. Only this file knows how CUDA kernels are launched.
//   run<Out, In...>(desc, f, stream)   an elementwise functor over an ElementwiseDesc
//   forEach(n, serial, f, stream)      an index-space functor `bool f(int64_t i)` over [0, n),
//                                      one thread per i; accumulations use atomics
//   forRows(rows, width, f, stream)    `f(row, begin, end)` over a [rows, width] space, one
//                                      thread per element
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cuda/geometry.h"
#include "runtime/cuda/cuda_error.h"
#include "runtime/cuda/cuda_stream.h"
#include "kernels/elementwise.h"

namespace accel::kernels::cuda {

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

// *p = f(*p, v) in OpMath<T>, as one compare-and-swap loop: on the aligned 4-byte word that
// holds p for 1- and 2-byte types (bool, int8, uint8, int16, half, bfloat16), on p itself for
// 4- and 8-byte ones.
template <class T, class F>
__device__ void casCombine(T* p, OpMath<T> v, F f) {
  using Word = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto* word = reinterpret_cast<Word*>(sizeof(T) >= 4 ? addr : addr & ~uintptr_t(3));
  const unsigned byte = sizeof(T) >= 4 ? 0 : addr & 3;
  Word old = *word, assumed;
  do {
    assumed = old;
    T cur;
    memcpy(&cur, reinterpret_cast<const char*>(&assumed) + byte, sizeof(T));
    const T next = castTo<T>(f(castTo<OpMath<T>>(cur), v));
    Word replacement = assumed;
    memcpy(reinterpret_cast<char*>(&replacement) + byte, &next, sizeof(T));
    old = atomicCAS(word, assumed, replacement);
  } while (assumed != old);
}

struct CasPlus {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return static_cast<V>(a + b);
  }
};

struct AtomicAccumulate {
  template <class T>
  __device__ static void add(T* p, OpMath<T> v) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t>) {
      atomicAdd(p, v);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      // Two's complement: unsigned addition wraps exactly like signed.
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
    } else if constexpr (std::is_same_v<T, c10::Half>) {
      // Native on sm_70+. The value is rounded to half first, as torch.cuda's gpuAtomicAdd does.
      atomicAdd(reinterpret_cast<__half*>(p), __float2half_rn(v));
    } else if constexpr (std::is_same_v<T, c10::BFloat16>) {
      atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __float2bfloat16_rn(v));  // native on sm_80+
    } else {
      casCombine(p, v, CasPlus{});
    }
  }
  template <class T, class Combine>
  __device__ static void combine(T* p, OpMath<T> v, Combine f) {
    casCombine(p, v, f);
  }
};

template <class F>
__global__ void rowsKernel(int64_t rows, int64_t width, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * width;
       i += step) {
    const int64_t q = i % width;
    f(i / width, q, q + 1);
  }
}

template <class F>
__global__ void forEachKernel(int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  // An out-of-range index is skipped (the aten layer validated the indices beforehand).
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    (void)f(i);
}

// The cudaStream_t behind a runtime stream, with its device made current. Plugin code cannot
// call rt::driver() (the plugin is loaded RTLD_LOCAL): the stream handle itself says which
// device and cudaStream_t to launch on.
inline rt::Error launchOn(rt::Stream stream, cudaStream_t* native) {
  const rt::cuda::CudaStream* s = rt::cuda::toCudaStream(stream);
  ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(s->device));
  *native = s->handle;
  return rt::Error::Success;
}

struct Executor {
  using Accumulate = AtomicAccumulate;
  // One output per thread of a column reduction (reduce.h): a warp reads adjacent addresses.
  static constexpr int kColumnLanes = 1;
  // Column reductions merge their partials in passes: a thread per output and run.
  static constexpr bool kColumnMergeInTask = false;

  template <class Out, class... In, class F>
  static rt::Error run(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
    if (d.numel == 0) return rt::Error::Success;
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    const auto blocks = static_cast<unsigned>(threadGrid(d.numel));
    constexpr bool typed = !std::is_same_v<Out, AnyDType> && (!std::is_same_v<In, AnyDType> && ...);
    if constexpr (typed) {
      if (isContiguous(d)) {
        launchDense<F, Out, In...>(blocks, native, d, f, std::index_sequence_for<In...>{});
        return rt::cuda::checkLaunch("denseKernel");
      }
    }
    stridedKernel<F, Out, In...><<<blocks, kThreads, 0, native>>>(d, f);
    return rt::cuda::checkLaunch("stridedKernel");
  }

  // f(row, begin, end) over a [rows, width] space: a thread per element.
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

  template <class F>
  static rt::Error forEach(int64_t n, bool /*serial: atomics*/, const F& f, rt::Stream stream) {
    if (n == 0) return rt::Error::Success;
    cudaStream_t native = nullptr;
    if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
    const auto blocks = static_cast<unsigned>(threadGrid(n));
    forEachKernel<<<blocks, kThreads, 0, native>>>(n, f);
    return rt::cuda::checkLaunch("forEachKernel");
  }

 private:
  template <class F, class Out, class... In, size_t... I>
  static void launchDense(unsigned blocks, cudaStream_t native, const ElementwiseDesc& d,
                          const F& f, std::index_sequence<I...>) {
    denseKernel<F, Out, In...><<<blocks, kThreads, 0, native>>>(d.numel, f, typedData<Out>(d, 0),
                                                                typedData<const In>(d, I + 1)...);
  }
};

}  // namespace accel::kernels::cuda
