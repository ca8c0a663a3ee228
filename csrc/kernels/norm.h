// The normalization family: softmax / log_softmax (forward and backward) along one dimension,
// layer norm (forward and backward) over contiguous rows, and fused attention's forward
// (softmax(q k^T * scale + mask) v, a softmax of computed scores). The math is shared by
// host/norm.cpp and cuda/norm.cu, which schedule it each their own way. On CUDA each line (a
// row of softmax, a row of layer norm) is reduced by partial loops over the elements begin,
// begin + step, ... (one per thread of a block, then merged), then written element by element
// with the formulas below; the host runs dense rows in vector lanes and a softmax along an
// outer dimension in blocks of adjacent lines (host/norm.cpp). Computed in OpMath (float for
// half/bfloat16), like ATen.
#pragma once

#include "kernels/dtype.h"
#include "kernels/reduce.h"
#include "kernels/reduce_math.h"

namespace accel::kernels {

// A contiguous [outer, dim, inner] problem along the middle dimension; every tensor has
// `dtype`. Forward: out = softmax(in). Backward: in = the forward's output, grad = its
// gradient, out = the input's gradient.
struct SoftmaxDesc {
  const char* in = nullptr;
  const char* grad = nullptr;  // backward only
  char* out = nullptr;
  DType dtype = DType::Float;
  int64_t outer = 1, dim = 1, inner = 1;
  bool log = false;
  bool safe = false;  // forward, not log: a line that is all -inf gives zeros (_safe_softmax)
};

// Whether a softmax line whose max is `max` gives zeros: `safe` and every element -inf.
template <class A>
ACCEL_HD inline bool zeroLine(bool safe, A max) {
  return safe && max == lowestOf<A>();
}

// Layer norm over contiguous rows [rows, cols]. weight/bias [cols] are optional (null), of
// `dtype` like x and y; mean and rstd are [rows] of OpMath<dtype> (float for half/bfloat16,
// as torch.cuda keeps them). Backward writes whichever of dx/dweight/dbias is set.
struct LayerNormDesc {
  const char* x = nullptr;
  const char* weight = nullptr;
  const char* bias = nullptr;
  char* y = nullptr;
  char* mean = nullptr;
  char* rstd = nullptr;
  const char* dy = nullptr;  // backward
  char* dx = nullptr;
  char* dweight = nullptr;
  char* dbias = nullptr;
  DType dtype = DType::Float;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
  char* scratch = nullptr;  // backward's dweight/dbias partials: layerNormParamScratchBytes
};

// Attention's forward for [batch, heads, queries, dim] queries against [batch, kv_heads, keys,
// dim] keys and [batch, kv_heads, keys, value_dim] values: each query row's scores
// q . k_j * scale + mask[j] over the keys it sees (j <= its index when causal, the top-left
// triangle of SDPA's is_causal), softmaxed, weight the values. Query head h reads kv head
// h / (heads / kv_heads) (grouped-query attention, as repeat_interleave gives the math path). A
// row that sees no key, or whose scores are all -inf, gives zeros (the math path's
// _safe_softmax). Strides are in elements, for the batch, head and row dims (the last dim is
// dense); the additive mask, of `dtype` or null, has strides for [batch, heads, queries, keys],
// zero where broadcast. lse, float [batch, heads, queries] or null, gets each row's
// log-sum-exp (-inf for a row of zeros). Computed in OpMath.
struct AttentionDesc {
  const char* q = nullptr;
  const char* k = nullptr;
  const char* v = nullptr;
  const char* mask = nullptr;
  char* out = nullptr;
  float* lse = nullptr;
  DType dtype = DType::Float;
  int64_t batch = 0, heads = 1, kv_heads = 1, queries = 0, keys = 0, dim = 0, value_dim = 0;
  int64_t q_stride[3] = {}, k_stride[3] = {}, v_stride[3] = {}, out_stride[3] = {};
  int64_t mask_stride[4] = {};
  double scale = 1;
  bool causal = false;
};

struct NormTable {
  rt::Error (*softmax)(const SoftmaxDesc& d, rt::Stream stream);
  rt::Error (*softmax_backward)(const SoftmaxDesc& d, rt::Stream stream);
  rt::Error (*layer_norm)(const LayerNormDesc& d, rt::Stream stream);
  rt::Error (*layer_norm_backward)(const LayerNormDesc& d, rt::Stream stream);
  rt::Error (*attention)(const AttentionDesc& d, rt::Stream stream);
};

const NormTable& normTable();  // the build of the driver in use

// First element of line `line` of a [outer, dim, inner] problem; its elements are `inner` apart.
ACCEL_HD inline int64_t lineStart(const SoftmaxDesc& d, int64_t line) {
  return (line / d.inner) * d.dim * d.inner + line % d.inner;
}

template <class T, class A = OpMath<T>>
ACCEL_HD inline A partialMax(const T* x, int64_t n, int64_t stride, int64_t begin, int64_t step) {
  A m = lowestOf<A>();
  for (int64_t j = begin; j < n; j += step) {
    const A v = castTo<A>(x[j * stride]);
    m = (isNan(v) || v > m) ? v : m;
  }
  return m;
}

template <class T, class A = OpMath<T>>
ACCEL_HD inline A partialSumExp(const T* x, int64_t n, int64_t stride, A max, int64_t begin,
                                int64_t step) {
  A s = A(0);
  for (int64_t j = begin; j < n; j += step) s += mexp(castTo<A>(x[j * stride]) - max);
  return s;
}

// softmax: exp(x - max) / sum; log_softmax: x - max - log(sum).
template <class T, class A = OpMath<T>>
ACCEL_HD inline void softmaxWrite(const T* x, T* y, int64_t n, int64_t stride, A max, A sum,
                                  bool log, int64_t begin, int64_t step) {
  if (log) {
    const A shift = max + mlog(sum);
    for (int64_t j = begin; j < n; j += step)
      y[j * stride] = castTo<T>(castTo<A>(x[j * stride]) - shift);
  } else {
    const A inv = A(1) / sum;
    for (int64_t j = begin; j < n; j += step)
      y[j * stride] = castTo<T>(mexp(castTo<A>(x[j * stride]) - max) * inv);
  }
}

// Backward: softmax needs sum(g * y), log_softmax sum(g).
template <class T, class A = OpMath<T>>
ACCEL_HD inline A partialGradDot(const T* g, const T* y, int64_t n, int64_t stride, bool log,
                                 int64_t begin, int64_t step) {
  A s = A(0);
  for (int64_t j = begin; j < n; j += step)
    s += log ? castTo<A>(g[j * stride]) : castTo<A>(g[j * stride]) * castTo<A>(y[j * stride]);
  return s;
}

// softmax: y * (g - dot); log_softmax: g - exp(y) * dot.
template <class T, class A = OpMath<T>>
ACCEL_HD inline void softmaxGradWrite(const T* g, const T* y, T* gi, int64_t n, int64_t stride,
                                      A dot, bool log, int64_t begin, int64_t step) {
  for (int64_t j = begin; j < n; j += step) {
    const A gv = castTo<A>(g[j * stride]), yv = castTo<A>(y[j * stride]);
    gi[j * stride] = castTo<T>(log ? gv - mexp(yv) * dot : yv * (gv - dot));
  }
}

template <class T, class A = OpMath<T>>
ACCEL_HD inline A partialSum(const T* x, int64_t n, int64_t begin, int64_t step) {
  A s = A(0);
  for (int64_t j = begin; j < n; j += step) s += castTo<A>(x[j]);
  return s;
}

template <class T, class A = OpMath<T>>
ACCEL_HD inline A partialSquaredDev(const T* x, int64_t n, A mean, int64_t begin, int64_t step) {
  A s = A(0);
  for (int64_t j = begin; j < n; j += step) {
    const A dv = castTo<A>(x[j]) - mean;
    s += dv * dv;
  }
  return s;
}

// Where query row `row` (of batch * heads * queries) reads and writes, in elements, and how
// many keys it sees.
struct AttentionRow {
  int64_t q, k, v, mask, out, keys;
};

ACCEL_HD inline AttentionRow attentionRow(const AttentionDesc& d, int64_t row) {
  const int64_t i = row % d.queries, bh = row / d.queries;
  const int64_t h = bh % d.heads, b = bh / d.heads, g = h / (d.heads / d.kv_heads);
  AttentionRow r;
  r.q = b * d.q_stride[0] + h * d.q_stride[1] + i * d.q_stride[2];
  r.k = b * d.k_stride[0] + g * d.k_stride[1];
  r.v = b * d.v_stride[0] + g * d.v_stride[1];
  r.mask = b * d.mask_stride[0] + h * d.mask_stride[1] + i * d.mask_stride[2];
  r.out = b * d.out_stride[0] + h * d.out_stride[1] + i * d.out_stride[2];
  r.keys = d.causal ? (i + 1 < d.keys ? i + 1 : d.keys) : d.keys;
  return r;
}

// Key j's score from its dot product with the query.
template <class T, class A = OpMath<T>>
ACCEL_HD inline A attentionScore(const AttentionDesc& d, const AttentionRow& r, int64_t j, A dot) {
  const A s = dot * static_cast<A>(d.scale);
  if (d.mask == nullptr) return s;
  return s + castTo<A>(reinterpret_cast<const T*>(d.mask)[r.mask + j * d.mask_stride[3]]);
}

template <class T, class A = OpMath<T>>
ACCEL_HD inline A weightAt(const T* w, int64_t j) {
  return w ? castTo<A>(w[j]) : A(1);
}

// y = (x - mean) * rstd * weight + bias.
template <class T, class A = OpMath<T>>
ACCEL_HD inline void layerNormWrite(const T* x, const T* w, const T* b, T* y, int64_t n, A mean,
                                    A rstd, int64_t begin, int64_t step) {
  for (int64_t j = begin; j < n; j += step) {
    A v = (castTo<A>(x[j]) - mean) * rstd * weightAt<T>(w, j);
    if (b) v += castTo<A>(b[j]);
    y[j] = castTo<T>(v);
  }
}

// Backward row sums: ds = sum(dy * w * x), db = sum(dy * w).
template <class T, class A = OpMath<T>>
ACCEL_HD inline void partialLayerNormGrad(const T* dy, const T* x, const T* w, int64_t n,
                                          int64_t begin, int64_t step, A& ds, A& db) {
  ds = db = A(0);
  for (int64_t j = begin; j < n; j += step) {
    const A g = castTo<A>(dy[j]) * weightAt<T>(w, j);
    ds += g * castTo<A>(x[j]);
    db += g;
  }
}

// dx = rstd * dy * w + b * x + c, with b = (db * mean - ds) * rstd^3 / n, c = -b * mean -
// db * rstd / n (ATen's formula), from a row's sums ds and db.
template <class A>
struct LayerNormGradCoeffs {
  A b, c;
  ACCEL_HD LayerNormGradCoeffs(A mean, A rstd, A ds, A db, int64_t n) {
    const A scale = A(1) / static_cast<A>(n);
    b = (db * mean - ds) * rstd * rstd * rstd * scale;
    c = -b * mean - db * rstd * scale;
  }
  ACCEL_HD A dx(A rstd, A dy, A w, A x) const { return rstd * dy * w + b * x + c; }
};

template <class T, class A = OpMath<T>>
ACCEL_HD inline void layerNormGradWrite(const T* dy, const T* x, const T* w, T* dx, int64_t n,
                                        A mean, A rstd, A ds, A db, int64_t begin, int64_t step) {
  const LayerNormGradCoeffs<A> k(mean, rstd, ds, db, n);
  for (int64_t j = begin; j < n; j += step)
    dx[j] = castTo<T>(k.dx(rstd, castTo<A>(dy[j]), weightAt<T>(w, j), castTo<A>(x[j])));
}

// --- The weight and bias gradients, written once -----------------------------------------
// Column sums over the rows of dy * (x - mean) * rstd (dweight) and dy (dbias), run as column
// reductions are (reduce.h's launchColumnChunks): chunks of rows for `Lanes` adjacent columns
// (CUDA: one per thread, coalesced; host: a dense run), whose partials merge pairwise in order
// (CUDA: in passes; host: mostly inside the chunks' tasks). A thread per column over all rows
// would leave an H200 nearly idle at a model's widths.

// The scratch of the partials, [chunks, 2 * cols] (each chunk's dweight then dbias) and the
// merge passes' (reduce.h), in OpMath.
inline int64_t layerNormParamScratchBytes(int64_t rows, int64_t cols, DType dtype) {
  const int64_t chunks = planColumns(cols, cols, rows, 1).chunks;
  return dispatchDType(dtype, [&](auto tag) -> int64_t {  // the partials are OpMath<T>
    using T = typename std::decay_t<decltype(tag)>::type;
    return columnScratchElements(2 * cols, chunks) * int64_t(sizeof(OpMath<T>));
  });
}

// The chunker (reduce.h's interface) of dweight and dbias: a group is Lanes adjacent columns,
// its accumulators their dweight partials then their dbias partials.
template <class T, int Lanes>
struct LayerNormParamChunkOp {
  using A = OpMath<T>;
  using Merge = SumReducer<A, A>;
  static constexpr int kAcc = 2 * Lanes;
  LayerNormDesc d;
  ColumnPlan p;

  struct Group {
    int64_t j0;  // its first column
    int lanes;   // its columns
  };
  ACCEL_HD Group group(int64_t g) const {
    const int64_t j0 = g * Lanes;
    return {j0, d.cols - j0 < Lanes ? static_cast<int>(d.cols - j0) : Lanes};
  }
  ACCEL_HD Merge merge() const { return Merge{A(1)}; }
  int64_t outputs() const { return 2 * d.cols; }
  A* workspace() const { return reinterpret_cast<A*>(d.scratch); }
  int64_t elementsPerChunk() const {
    return (p.rows < d.rows ? p.rows : d.rows) * (d.cols < Lanes ? d.cols : Lanes);
  }
  ACCEL_HD void reduceChunk(const Group& k, int64_t c, A (&acc)[kAcc]) const {
    const T* dy = reinterpret_cast<const T*>(d.dy);
    const T* x = reinterpret_cast<const T*>(d.x);
    const A* mean = reinterpret_cast<const A*>(d.mean);
    const A* rstd = reinterpret_cast<const A*>(d.rstd);
    A* dw = acc;
    A* db = acc + Lanes;
    for (int l = 0; l < kAcc; ++l) acc[l] = A(0);
    const int64_t end = (c + 1) * p.rows < d.rows ? (c + 1) * p.rows : d.rows;
    for (int64_t i = c * p.rows; i < end; ++i) {
      const T* dyr = dy + i * d.cols + k.j0;
      const T* xr = x + i * d.cols + k.j0;
      const A m = mean[i], r = rstd[i];
      for (int l = 0; l < k.lanes; ++l) {
        const A gv = castTo<A>(dyr[l]);
        dw[l] += gv * (castTo<A>(xr[l]) - m) * r;
        db[l] += gv;
      }
    }
  }
  ACCEL_HD void writeResults(const Group& k, const A (&acc)[kAcc]) const {
    for (int l = 0; l < k.lanes; ++l) {
      if (d.dweight) reinterpret_cast<T*>(d.dweight)[k.j0 + l] = castTo<T>(acc[l]);
      if (d.dbias) reinterpret_cast<T*>(d.dbias)[k.j0 + l] = castTo<T>(acc[Lanes + l]);
    }
  }
  ACCEL_HD void writePartials(const Group& k, int64_t slot, const A (&acc)[kAcc]) const {
    A* partial = workspace() + slot * 2 * d.cols;
    for (int l = 0; l < k.lanes; ++l) {
      partial[k.j0 + l] = acc[l];
      partial[d.cols + k.j0 + l] = acc[Lanes + l];
    }
  }
};

// Stores merged output o of [dweight, dbias].
template <class T>
struct LayerNormParamSink {
  LayerNormDesc d;
  ACCEL_HD void operator()(int64_t o, OpMath<T> v) const {
    char* out = o < d.cols ? d.dweight : d.dbias;
    if (out) reinterpret_cast<T*>(out)[o < d.cols ? o : o - d.cols] = castTo<T>(v);
  }
};

// dweight and dbias (whichever is set) on either driver; d.scratch holds
// layerNormParamScratchBytes.
template <class Exec>
rt::Error launchLayerNormParamGrad(const LayerNormDesc& d, rt::Stream stream) {
  if (!d.dweight && !d.dbias) return rt::Error::Success;
  constexpr int kLanes = Exec::kColumnLanes;
  const ColumnPlan p = planColumns(d.cols, d.cols, d.rows, kLanes);
  if (p.chunks > 1 && d.scratch == nullptr) return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) -> rt::Error {
    using T = typename std::decay_t<decltype(tag)>::type;
    if constexpr (isFloating<T>) {
      return launchColumnChunks<Exec>(LayerNormParamChunkOp<T, kLanes>{d, p},
                                      LayerNormParamSink<T>{d}, stream);
    }
    return rt::Error::NotSupported;
  });
}

}  // namespace accel::kernels
