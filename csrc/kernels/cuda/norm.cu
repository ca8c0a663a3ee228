// CUDA build of the normalization family: a thread block per line (softmax), row (layer norm)
// or query row (attention), merging per-thread partials with warp shuffles; layer norm's
// weight and bias gradients as norm.h writes them.
#include <algorithm>
#include <type_traits>

#include "kernels/cuda/executor.cuh"
#include "kernels/norm.h"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

struct SumOp {
  template <class A>
  __device__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct MaxOp {
  template <class A>
  __device__ A operator()(A a, A b) const {
    return (isNan(b) || b > a) ? b : a;
  }
};

// Every thread gets the op-merge of all threads' `v` (blockDim.x a multiple of 32).
template <class A, class Op>
__device__ A blockReduce(A v, Op op) {
  __shared__ A warp_val[32];
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // the previous call's readers are done with warp_val
  if ((threadIdx.x & 31) == 0) warp_val[threadIdx.x >> 5] = v;
  __syncthreads();
  A r = warp_val[0];
  for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w) r = op(r, warp_val[w]);
  return r;
}

template <class T>
__global__ void softmaxKernel(SoftmaxDesc d) {
  using A = OpMath<T>;
  const T* x = reinterpret_cast<const T*>(d.in);
  T* y = reinterpret_cast<T*>(d.out);
  for (int64_t line = blockIdx.x; line < d.outer * d.inner; line += gridDim.x) {
    const int64_t s = lineStart(d, line);
    const A m = blockReduce(partialMax(x + s, d.dim, d.inner, threadIdx.x, blockDim.x), MaxOp{});
    if (zeroLine(d.safe, m)) {  // the whole block sees the same max
      for (int64_t j = threadIdx.x; j < d.dim; j += blockDim.x) y[s + j * d.inner] = T(0);
      continue;
    }
    const A sum =
        blockReduce(partialSumExp(x + s, d.dim, d.inner, m, threadIdx.x, blockDim.x), SumOp{});
    softmaxWrite(x + s, y + s, d.dim, d.inner, m, sum, d.log, threadIdx.x, blockDim.x);
  }
}

template <class T>
__global__ void softmaxBackwardKernel(SoftmaxDesc d) {
  const T* y = reinterpret_cast<const T*>(d.in);
  const T* g = reinterpret_cast<const T*>(d.grad);
  T* gi = reinterpret_cast<T*>(d.out);
  for (int64_t line = blockIdx.x; line < d.outer * d.inner; line += gridDim.x) {
    const int64_t s = lineStart(d, line);
    const auto dot = blockReduce(
        partialGradDot(g + s, y + s, d.dim, d.inner, d.log, threadIdx.x, blockDim.x), SumOp{});
    softmaxGradWrite(g + s, y + s, gi + s, d.dim, d.inner, dot, d.log, threadIdx.x, blockDim.x);
  }
}

// Key j's score: the block's threads take the keys in turn, each a whole dot product.
template <class T, class A = OpMath<T>>
__device__ A keyScore(const AttentionDesc& d, const AttentionRow& r, const T* q, int64_t j) {
  const T* k = reinterpret_cast<const T*>(d.k) + r.k + j * d.k_stride[2];
  A dot = A(0);
  for (int64_t t = 0; t < d.dim; ++t) dot += castTo<A>(q[t]) * castTo<A>(k[t]);
  return attentionScore<T>(d, r, j, dot);
}

// Three passes over the keys (max, sum of exps, weighted values), recomputing the scores;
// the last one stages kThreads probabilities at a time in shared memory, for the threads to
// read while each accumulates its value columns.
template <class T>
__global__ void attentionKernel(AttentionDesc d) {
  using A = OpMath<T>;
  __shared__ A p[kThreads];
  const int64_t rows = d.batch * d.heads * d.queries;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const AttentionRow r = attentionRow(d, row);
    const T* q = reinterpret_cast<const T*>(d.q) + r.q;
    const T* v = reinterpret_cast<const T*>(d.v) + r.v;
    T* out = reinterpret_cast<T*>(d.out) + r.out;
    A m = lowestOf<A>();
    for (int64_t j = threadIdx.x; j < r.keys; j += blockDim.x) m = MaxOp{}(m, keyScore(d, r, q, j));
    m = blockReduce(m, MaxOp{});
    if (zeroLine(true, m)) {  // the whole block sees the same max
      for (int64_t t = threadIdx.x; t < d.value_dim; t += blockDim.x) out[t] = T(0);
      if (d.lse && threadIdx.x == 0) d.lse[row] = lowestOf<float>();
      continue;
    }
    A sum = A(0);
    for (int64_t j = threadIdx.x; j < r.keys; j += blockDim.x)
      sum += mexp(keyScore(d, r, q, j) - m);
    sum = blockReduce(sum, SumOp{});
    for (int64_t t0 = 0; t0 < d.value_dim; t0 += blockDim.x) {
      const int64_t t = t0 + threadIdx.x;
      A acc = A(0);
      for (int64_t c = 0; c < r.keys; c += blockDim.x) {
        const int64_t j = c + threadIdx.x;
        __syncthreads();  // the previous chunk's readers are done with p
        p[threadIdx.x] = j < r.keys ? mexp(keyScore(d, r, q, j) - m) : A(0);
        __syncthreads();
        const int64_t n = r.keys - c < blockDim.x ? r.keys - c : blockDim.x;
        if (t < d.value_dim)
          for (int64_t u = 0; u < n; ++u) acc += p[u] * castTo<A>(v[(c + u) * d.v_stride[2] + t]);
      }
      if (t < d.value_dim) out[t] = castTo<T>(acc / sum);
    }
    if (d.lse && threadIdx.x == 0) d.lse[row] = static_cast<float>(m + mlog(sum));
  }
}

template <class T>
__global__ void layerNormKernel(LayerNormDesc d) {
  using A = OpMath<T>;
  const T* w = reinterpret_cast<const T*>(d.weight);
  const T* b = reinterpret_cast<const T*>(d.bias);
  for (int64_t i = blockIdx.x; i < d.rows; i += gridDim.x) {
    const T* x = reinterpret_cast<const T*>(d.x) + i * d.cols;
    const A mean = blockReduce(partialSum(x, d.cols, threadIdx.x, blockDim.x), SumOp{}) /
                   static_cast<A>(d.cols);
    const A var =
        blockReduce(partialSquaredDev(x, d.cols, mean, threadIdx.x, blockDim.x), SumOp{}) /
        static_cast<A>(d.cols);
    const A rstd = A(1) / msqrt(var + static_cast<A>(d.eps));
    layerNormWrite(x, w, b, reinterpret_cast<T*>(d.y) + i * d.cols, d.cols, mean, rstd, threadIdx.x,
                   blockDim.x);
    if (threadIdx.x == 0) {
      reinterpret_cast<A*>(d.mean)[i] = mean;
      reinterpret_cast<A*>(d.rstd)[i] = rstd;
    }
  }
}

template <class T>
__global__ void layerNormGradInputKernel(LayerNormDesc d) {
  using A = OpMath<T>;
  const T* w = reinterpret_cast<const T*>(d.weight);
  for (int64_t i = blockIdx.x; i < d.rows; i += gridDim.x) {
    const int64_t o = i * d.cols;
    const T* dy = reinterpret_cast<const T*>(d.dy) + o;
    const T* x = reinterpret_cast<const T*>(d.x) + o;
    A ds, db;
    partialLayerNormGrad(dy, x, w, d.cols, threadIdx.x, blockDim.x, ds, db);
    ds = blockReduce(ds, SumOp{});
    db = blockReduce(db, SumOp{});
    layerNormGradWrite(dy, x, w, reinterpret_cast<T*>(d.dx) + o, d.cols,
                       reinterpret_cast<const A*>(d.mean)[i], reinterpret_cast<const A*>(d.rstd)[i],
                       ds, db, threadIdx.x, blockDim.x);
  }
}

// Runs launch(TypeTag<T>{}, native stream) for a floating dtype.
template <class F>
rt::Error launchFloating(DType t, rt::Stream stream, F&& launch) {
  const rt::cuda::CudaStream* s = rt::cuda::toCudaStream(stream);
  ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(s->device));
  return dispatchDType(t, [&](auto tag) -> rt::Error {
    using T = typename std::decay_t<decltype(tag)>::type;
    if constexpr (isFloating<T>) {
      launch(tag, s->handle);
      return rt::cuda::checkLaunch("norm family kernel");
    }
    return rt::Error::NotSupported;
  });
}

unsigned gridFor(int64_t blocks) { return static_cast<unsigned>(blockGrid(blocks)); }

}  // namespace

rt::Error softmax(const SoftmaxDesc& d, rt::Stream stream) {
  if (d.outer * d.dim * d.inner == 0) return rt::Error::Success;
  return launchFloating(d.dtype, stream, [&](auto tag, cudaStream_t native) {
    using T = typename std::decay_t<decltype(tag)>::type;
    softmaxKernel<T><<<gridFor(d.outer * d.inner), kThreads, 0, native>>>(d);
  });
}

rt::Error softmax_backward(const SoftmaxDesc& d, rt::Stream stream) {
  if (d.outer * d.dim * d.inner == 0) return rt::Error::Success;
  return launchFloating(d.dtype, stream, [&](auto tag, cudaStream_t native) {
    using T = typename std::decay_t<decltype(tag)>::type;
    softmaxBackwardKernel<T><<<gridFor(d.outer * d.inner), kThreads, 0, native>>>(d);
  });
}

rt::Error layer_norm(const LayerNormDesc& d, rt::Stream stream) {
  if (d.rows == 0) return rt::Error::Success;
  return launchFloating(d.dtype, stream, [&](auto tag, cudaStream_t native) {
    using T = typename std::decay_t<decltype(tag)>::type;
    layerNormKernel<T><<<gridFor(d.rows), kThreads, 0, native>>>(d);
  });
}

rt::Error layer_norm_backward(const LayerNormDesc& d, rt::Stream stream) {
  if (d.dx && d.rows > 0) {
    if (rt::Error e = launchFloating(d.dtype, stream,
                                     [&](auto tag, cudaStream_t native) {
                                       using T = typename std::decay_t<decltype(tag)>::type;
                                       layerNormGradInputKernel<T>
                                           <<<gridFor(d.rows), kThreads, 0, native>>>(d);
                                     });
        e != rt::Error::Success)
      return e;
  }
  return launchLayerNormParamGrad<Executor>(d, stream);
}

rt::Error attention(const AttentionDesc& d, rt::Stream stream) {
  const int64_t rows = d.batch * d.heads * d.queries;
  if (rows == 0 || d.value_dim == 0) return rt::Error::Success;
  return launchFloating(d.dtype, stream, [&](auto tag, cudaStream_t native) {
    using T = typename std::decay_t<decltype(tag)>::type;
    attentionKernel<T><<<gridFor(rows), kThreads, 0, native>>>(d);
  });
}

const NormTable& normTable() {
  static const NormTable table{&softmax, &softmax_backward, &layer_norm, &layer_norm_backward,
                               &attention};
  return table;
}

}  // namespace accel::kernels::cuda
