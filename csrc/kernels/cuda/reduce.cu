// CUDA build of the reduction family: planReduce's workers (reduce.h) as thread blocks, a
// second pass combining partials when few outputs split their reduced ranges; a thread per
// output when the reduced range is short.
#include <algorithm>

#include "kernels/cuda/plan_executor.cuh"
#include "kernels/reduce.h"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

constexpr int64_t kShortReduce = 32;

// Pass 1 (planReduce): a block per worker t = (output t / splits, chunk t % splits); its
// threads stride over the chunk, then a tree merge in shared memory. One chunk per output:
// the block writes the output; else its partial accumulator goes to partial[t].
template <class In, class R>
__global__ void blockPerChunk(ReduceDesc d, R r, ReducePlan plan, typename R::acc_t* partial) {
  using A = typename R::acc_t;
  __shared__ alignas(16) unsigned char smem[kThreads * sizeof(A)];
  A* s = reinterpret_cast<A*>(smem);
  const int tid = threadIdx.x;
  for (int64_t t = blockIdx.x; t < plan.workers; t += gridDim.x) {
    const int64_t o = t / plan.splits, c = t % plan.splits;
    const int64_t end = (c + 1) * plan.chunk < d.red_numel ? (c + 1) * plan.chunk : d.red_numel;
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    // The thread's elements in blocks of kCascade, merged pairwise (reduce.h).
    Pairwise<R> acc;
    A part = r.identity();
    int64_t in_part = 0;
    for (int64_t j = c * plan.chunk + tid; j < end; j += blockDim.x) {
      part = r.reduce(part, loadIn<In>(d, base + redOffset(d, j)), j);
      if (++in_part == kCascade) {
        acc.push(r, part);
        part = r.identity();
        in_part = 0;
      }
    }
    if (in_part > 0) acc.push(r, part);
    s[tid] = acc.result(r);
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (tid < w) s[tid] = r.combine(s[tid], s[tid + w]);
      __syncthreads();
    }
    if (tid == 0) {
      if (plan.splits == 1) {
        r.write(s[0], d, off);
      } else {
        partial[t] = s[0];
      }
    }
    __syncthreads();
  }
}

// Pass 2 of a split reduction: a thread per output combines its partials in order (a few
// hundred at most: the plan makes about 4 workers per SM in all).
template <class R>
__global__ void combinePartials(ReduceDesc d, R r, ReducePlan plan,
                                const typename R::acc_t* partial) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < d.out_numel;
       o += step) {
    Pairwise<R> acc;
    for (int64_t c = 0; c < plan.splits; ++c) acc.push(r, partial[o * plan.splits + c]);
    int64_t base, off[2];
    outOffsets(d, o, base, off);
    r.write(acc.result(r), d, off);
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
       line += step)
    scanLine<In, Out>(d, line);
}

unsigned blocksFor(int64_t n) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}

// The CUDA build's plan: at least 16 elements per thread of a block in each chunk.
ReducePlan planFor(const ReduceDesc& d, rt::Stream stream) {
  return planReduce(d.out_numel, d.red_numel, smCount(stream), 16 * kThreads);
}

}  // namespace

int64_t workspaceBytes(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream) {
  if (validateReduce(d) != rt::Error::Success || d.out_numel == 0 || d.red_numel <= kShortReduce)
    return 0;
  const ReducePlan plan = planFor(d, stream);
  if (plan.splits == 1) return 0;
  int64_t bytes = 0;
  (void)dispatchReducer(op, d, params, [&](auto, auto r) {
    bytes = plan.workers * static_cast<int64_t>(sizeof(typename decltype(r)::acc_t));
    return rt::Error::Success;
  });
  return bytes;
}

rt::Error reduce(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream) {
  if (rt::Error e = validateReduce(d); e != rt::Error::Success) return e;
  if (d.out_numel == 0) return rt::Error::Success;
  cudaStream_t native = nullptr;
  if (rt::Error e = launchOn(stream, &native); e != rt::Error::Success) return e;
  return dispatchReducer(op, d, params, [&](auto in_tag, auto r) {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    using A = typename decltype(r)::acc_t;
    if (d.red_numel <= kShortReduce) {
      threadPerOutput<In><<<blocksFor(d.out_numel), kThreads, 0, native>>>(d, r);
      return rt::cuda::checkLaunch("threadPerOutput");
    }
    auto* partial = reinterpret_cast<A*>(d.workspace);
    // A caller that gave no workspace gets a block per output: right, only slower.
    const ReducePlan plan = partial != nullptr
                                ? planFor(d, stream)
                                : planReduce(d.out_numel, d.red_numel, 0, d.red_numel + 1);
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(plan.workers, kMaxBlocks));
    blockPerChunk<In><<<blocks, kThreads, 0, native>>>(d, r, plan, partial);
    if (rt::Error e = rt::cuda::checkLaunch("blockPerChunk"); e != rt::Error::Success) return e;
    if (plan.splits == 1) return rt::Error::Success;
    combinePartials<<<blocksFor(d.out_numel), kThreads, 0, native>>>(d, r, plan, partial);
    return rt::cuda::checkLaunch("combinePartials");
  });
}

rt::Error scan(const ScanDesc& d, rt::Stream stream) {
  if (rt::Error e = validateScan(d); e != rt::Error::Success) return e;
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
  static const ReduceTable table = makeReduceTable<Executor>(&reduce, &workspaceBytes, &scan);
  return table;
}

}  // namespace accel::kernels::cuda
