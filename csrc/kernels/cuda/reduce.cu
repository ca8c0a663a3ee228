// CUDA build of the reduction family: planReduce's workers (reduce.h) as thread blocks, a
// second pass combining partials when few outputs split their reduced ranges; a thread per
// output when the reduced range is short. Column reductions, the scans and nll_loss are
// reduce.h's, whole.
#include <algorithm>

#include "kernels/cuda/plan_executor.cuh"
#include "kernels/reduce.h"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

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

// Pass 2 of a split reduction: a block per output. Its threads merge runs of consecutive
// partials, then a tree in shared memory merges the runs in order (one thread reading a few
// hundred partials in sequence would take tens of microseconds).
template <class R>
__global__ void combinePartials(ReduceDesc d, R r, ReducePlan plan,
                                const typename R::acc_t* partial) {
  using A = typename R::acc_t;
  __shared__ alignas(16) unsigned char smem[kThreads * sizeof(A)];
  A* s = reinterpret_cast<A*>(smem);
  const int tid = threadIdx.x;
  const int64_t per = (plan.splits + blockDim.x - 1) / blockDim.x;
  for (int64_t o = blockIdx.x; o < d.out_numel; o += gridDim.x) {
    A acc = r.identity();
    const int64_t end = (tid + 1) * per < plan.splits ? (tid + 1) * per : plan.splits;
    for (int64_t c = tid * per; c < end; ++c) acc = r.combine(acc, partial[o * plan.splits + c]);
    s[tid] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (tid < w) s[tid] = r.combine(s[tid], s[tid + w]);
      __syncthreads();
    }
    if (tid == 0) {
      int64_t base, off[2];
      outOffsets(d, o, base, off);
      r.write(s[0], d, off);
    }
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

ReducePlan planFor(const ReduceDesc& d, rt::Stream stream) {
  return planReduce(d.out_numel, d.red_numel, smCount(stream), kReduceMinChunk);
}

}  // namespace

int64_t workspaceBytes(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream) {
  if (validateReduce(d) != rt::Error::Success || d.out_numel == 0) return 0;
  int64_t bytes = 0;
  (void)dispatchReducer(op, d, params, [&](auto in_tag, auto r) {
    using In = typename std::decay_t<decltype(in_tag)>::type;
    const ReducePath path = reducePath(isColumnReduce(d, sizeof(In)), d.red_numel);
    if (path == ReducePath::Columns) {
      bytes = columnWorkspaceBytes(d, r);
    } else if (path == ReducePath::Blocks) {
      const ReducePlan plan = planFor(d, stream);
      if (plan.splits > 1)
        bytes = plan.workers * static_cast<int64_t>(sizeof(typename decltype(r)::acc_t));
    }
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
    const ReducePath path = reducePath(takesColumnPath(d, sizeof(In)), d.red_numel);
    if (path == ReducePath::Columns) return launchColumnReduce<Executor, In>(d, r, stream);
    if (path == ReducePath::ThreadPerOutput) {
      threadPerOutput<In>
          <<<static_cast<unsigned>(threadGrid(d.out_numel)), kThreads, 0, native>>>(d, r);
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
    combinePartials<<<blockGrid(d.out_numel), kThreads, 0, native>>>(d, r, plan, partial);
    return rt::cuda::checkLaunch("combinePartials");
  });
}

const ReduceTable& reduceTable() {
  static const ReduceTable table = makeReduceTable<PlanExecutor>(&reduce, &workspaceBytes);
  return table;
}

}  // namespace accel::kernels::cuda
