// CUDA build of the reduction family: a thread block per output (threads stride over the
// reduced range, then a tree merge in shared memory); a thread per output when the reduced
// range is short.
#include <algorithm>

#include "kernels/cuda/executor.cuh"
#include "kernels/reduce.h"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

constexpr int64_t kShortReduce = 32;

template <class In, class R>
__global__ void blockPerOutput(ReduceDesc d, R r) {
  using A = typename R::acc_t;
  __shared__ alignas(16) unsigned char smem[kThreads * sizeof(A)];
  A* s = reinterpret_cast<A*>(smem);
  const int tid = threadIdx.x;
  for (int64_t o = blockIdx.x; o < d.out_numel; o += gridDim.x) {
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    A acc = r.identity();
    for (int64_t j = tid; j < d.red_numel; j += blockDim.x)
      acc = r.reduce(acc, loadIn<In>(d, base + redOffset(d, j)), j);
    s[tid] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (tid < w) s[tid] = r.combine(s[tid], s[tid + w]);
      __syncthreads();
    }
    if (tid == 0) r.write(s[0], d, off);
    __syncthreads();
  }
}

template <class In, class R>
__global__ void threadPerOutput(ReduceDesc d, R r) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < d.out_numel;
       o += step) {
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    typename R::acc_t acc = r.identity();
    for (int64_t j = 0; j < d.red_numel; ++j)
      acc = r.reduce(acc, loadIn<In>(d, base + redOffset(d, j)), j);
    r.write(acc, d, off);
  }
}

template <class In, class Out>
__global__ void scanKernel(ScanDesc d) {
  const int64_t lines = d.outer * d.inner;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines;
       line += step) {
    const int64_t start = (line / d.inner) * d.n * d.inner + line % d.inner;
    scanLine<In, Out, SumAcc<Out>>(reinterpret_cast<const In*>(d.in) + start,
                                   reinterpret_cast<Out*>(d.out) + start, d.n, d.inner);
  }
}

unsigned blocksFor(int64_t n) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}

}  // namespace

rt::Error reduce(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream) {
  if (rt::Error e = validateReduce(d); e != rt::Error::Success) return e;
  if (d.out_numel == 0) return rt::Error::Success;
  cudaStream_t native = nullptr;
  if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
  return dispatchReducer(op, d, params, [&](auto in_tag, auto r) {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    if (d.red_numel <= kShortReduce) {
      threadPerOutput<In><<<blocksFor(d.out_numel), kThreads, 0, native>>>(d, r);
    } else {
      const auto blocks = static_cast<unsigned>(std::min<int64_t>(d.out_numel, kMaxBlocks));
      blockPerOutput<In><<<blocks, kThreads, 0, native>>>(d, r);
    }
    return rt::cuda::checkLaunch("reduce kernel");
  });
}

rt::Error cumsum(const ScanDesc& d, rt::Stream stream) {
  if (!isSupported(d.in_dtype) || !isSupported(d.out_dtype)) return rt::Error::InvalidValue;
  if (d.outer * d.n * d.inner == 0) return rt::Error::Success;
  cudaStream_t native = nullptr;
  if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
  return dispatchDType(d.in_dtype, [&](auto in_tag) {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    return dispatchDType(d.out_dtype, [&](auto out_tag) {
      using Out = typename std::decay_t<decltype(out_tag)>::type;
      scanKernel<In, Out><<<blocksFor(d.outer * d.inner), kThreads, 0, native>>>(d);
      return rt::cuda::checkLaunch("scanKernel");
    });
  });
}

const ReduceTable& reduceTable() {
  // The casts let nvcc resolve the function templates' addresses.
  static const ReduceTable table{
      &reduce, &cumsum,
      static_cast<decltype(ReduceTable::nll_loss_forward)>(&launchNllForward<Executor>),
      static_cast<decltype(ReduceTable::nll_loss_backward)>(&launchNllBackward<Executor>)};
  return table;
}

}  // namespace accel::kernels::cuda
