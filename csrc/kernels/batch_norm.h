// The batch norm family: batch norm's forward (training statistics, running statistics,
// normalisation) and backward over an input [N, C, S] (S: the spatial dimensions collapsed,
// any element strides, so channels-last needs no copy), in at most three launches each, written
// once for both drivers:
//   1. per (chunk, channel): a chunk's statistics, Welford's (n, mean, m2) forward, the sums of
//      dy and dy * (x - mean) backward, each over its elements in (n, s) order;
//   2. the chunks' partials merged pairwise in order (reduce.h's column merge), then finished
//      per channel: mean, invstd and the running statistics; or the parameters' gradients;
//   3. the elementwise pass: y, or dx, from the per-channel numbers.
// A channel that fits one chunk skips pass 2 (the host's usual case: a chunk is at least its
// grain). Per-channel vectors are OpMath<dtype> (float for half and bfloat16). The arithmetic is
// ATen's CPU kernel's: y = x * alpha + beta with alpha = invstd * weight, beta = bias - mean *
// alpha; dx = (dy - sum(dy) / M - (x - mean) * k) * invstd * weight with k = sum(dy * (x -
// mean)) * invstd^2 / M, M = N * S.
#pragma once

#include "kernels/dtype.h"
#include "kernels/reduce.h"
#include "kernels/scan_plan.h"

namespace accel::kernels {

// One tensor of a batch norm as [N, C, S], element strides.
struct BatchNormTensor {
  char* data = nullptr;
  int64_t stride_n = 0, stride_c = 0, stride_s = 0;

  template <class T>
  ACCEL_HD T* at(int64_t n, int64_t c, int64_t s) const {
    return reinterpret_cast<T*>(data) + n * stride_n + c * stride_c + s * stride_s;
  }
};

struct BatchNormDesc {
  DType dtype = DType::Float;  // of x, y, dy and dx: Half, BFloat16, Float or Double
  int64_t batch = 0, channels = 0, spatial = 1;
  BatchNormTensor x, y;  // forward: y from x
  BatchNormTensor dy;    // backward: dx (if set), dweight and dbias (if set) from x and dy
  BatchNormTensor dx;
  // Per-channel vectors, contiguous [C] of OpMath<dtype>; null when absent.
  const char* weight = nullptr;
  const char* bias = nullptr;
  // Training: the batch's mean and 1 / sqrt(var + eps), written by the forward (rounded to
  // dtype first when round_stats: CPU normalises with statistics saved in the parameters'
  // dtype) and read by the backward.
  char* mean = nullptr;
  char* invstd = nullptr;
  // A training forward updates them (when set); evaluation normalises with them.
  char* running_mean = nullptr;
  char* running_var = nullptr;
  char* dweight = nullptr;
  char* dbias = nullptr;
  bool training = true;
  bool round_stats = false;
  double momentum = 0.1, eps = 1e-5;
  char* workspace = nullptr;  // workspace_bytes of it
};

// Pass 1's chunks: `chunks` per channel of `rows` consecutive elements of its N * S (the last
// maybe shorter). Enough chunk tasks for the driver (ScanGeometry: units * tasks_per_unit),
// none shorter than min_chunk unless a channel is.
struct BatchNormPlan {
  int64_t rows = 0, chunks = 1;
};

inline BatchNormPlan planBatchNorm(int64_t channels, int64_t per_channel, const ScanGeometry& g) {
  BatchNormPlan p;
  const int64_t tasks = g.units * g.tasks_per_unit;
  const int64_t want = channels > 0 ? (tasks + channels - 1) / channels : 1;
  const int64_t most = per_channel / (g.min_chunk > 0 ? g.min_chunk : 1);
  p.chunks = want < most ? want : most;
  if (p.chunks < 1) p.chunks = 1;
  p.rows = (per_channel + p.chunks - 1) / p.chunks;
  if (p.rows > 0) p.chunks = (per_channel + p.rows - 1) / p.rows;  // no empty chunk
  return p;
}

template <class T>
ACCEL_HD inline OpMath<T> channelValue(const char* v, int64_t c) {
  return reinterpret_cast<const OpMath<T>*>(v)[c];
}

// The mean and invstd a pass normalises with: the batch's (training) or the running ones.
template <class T>
ACCEL_HD inline void normStats(const BatchNormDesc& d, int64_t c, OpMath<T>& mean,
                               OpMath<T>& invstd) {
  using A = OpMath<T>;
  if (d.training) {
    mean = channelValue<T>(d.mean, c);
    invstd = channelValue<T>(d.invstd, c);
  } else {
    mean = channelValue<T>(d.running_mean, c);
    invstd = A(1) / msqrt(channelValue<T>(d.running_var, c) + static_cast<A>(d.eps));
  }
}

// Sums over a run of n elements: of x - center (Values), (x - center)^2 (Squares) or
// y * (x - center) (Products), x and y `x_stride` and `y_stride` apart. Dense runs add in 8
// lanes (independent adds, which the host vectorises: one sum per loop, as two in one loop
// defeat GCC's vectoriser), merged pairwise, then the rest.
constexpr int kBatchNormLanes = 8;
enum class RunSum { Values, Squares, Products };

template <RunSum K, class A>
ACCEL_HD inline A runTerm(A x, A y, A center) {
  const A v = x - center;
  return K == RunSum::Values ? v : K == RunSum::Squares ? v * v : y * v;
}

template <RunSum K, class T, class A = OpMath<T>>
ACCEL_HD inline A runSum(const T* x, int64_t x_stride, const T* y, int64_t y_stride, int64_t n,
                         A center) {
  A lane[kBatchNormLanes];
  for (int l = 0; l < kBatchNormLanes; ++l) lane[l] = A(0);
  int64_t j = 0;
  if (x_stride == 1 && y_stride == 1) {
    for (; j + kBatchNormLanes <= n; j += kBatchNormLanes)
      for (int l = 0; l < kBatchNormLanes; ++l)
        lane[l] += runTerm<K>(castTo<A>(x[j + l]), castTo<A>(y[j + l]), center);
  }
  A rest = A(0);  // a scalar, so the lanes stay in registers
  for (; j < n; ++j)
    rest += runTerm<K>(castTo<A>(x[j * x_stride]), castTo<A>(y[j * y_stride]), center);
  for (int w = kBatchNormLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  return lane[0] + rest;
}

// Pass 2's end of a forward: channel c's statistics from its merged Welford state.
template <class T>
struct BatchNormStatsSink {
  BatchNormDesc d;
  ACCEL_HD void operator()(int64_t c, Welford<OpMath<T>> w) const {
    using A = OpMath<T>;
    const A n = static_cast<A>(w.n);
    const A var = w.m2 / n;
    const A momentum = static_cast<A>(d.momentum);
    if (d.running_mean) {
      A* rm = reinterpret_cast<A*>(d.running_mean) + c;
      *rm = (A(1) - momentum) * *rm + momentum * w.mean;
    }
    if (d.running_var) {
      A* rv = reinterpret_cast<A*>(d.running_var) + c;
      *rv = (A(1) - momentum) * *rv + momentum * (var * n / (n - A(1)));
    }
    A mean = w.mean, invstd = A(1) / msqrt(var + static_cast<A>(d.eps));
    if (d.round_stats) {
      mean = castTo<A>(castTo<T>(mean));
      invstd = castTo<A>(castTo<T>(invstd));
    }
    reinterpret_cast<A*>(d.mean)[c] = mean;
    reinterpret_cast<A*>(d.invstd)[c] = invstd;
  }
};

// Pass 1 of a training forward: task t is chunk t / C of channel t % C (neighbouring tasks take
// neighbouring channels: coalesced reads of a channels-last input on CUDA).
template <class T>
struct BatchNormStatsOp {
  BatchNormDesc d;
  BatchNormPlan p;
  int64_t elementsPerIndex() const { return p.rows; }  // the host's task grain
  // runSum over channel c's elements [begin, end), run by run (a run stays within one n).
  template <RunSum K>
  ACCEL_HD OpMath<T> chunkSum(int64_t c, int64_t begin, int64_t end, OpMath<T> center) const {
    OpMath<T> sum = OpMath<T>(0);
    for (int64_t j = begin; j < end;) {
      const int64_t n = j / d.spatial, s = j % d.spatial;
      const int64_t len = end - j < d.spatial - s ? end - j : d.spatial - s;
      const T* x = d.x.at<const T>(n, c, s);
      sum += runSum<K>(x, d.x.stride_s, x, d.x.stride_s, len, center);
      j += len;
    }
    return sum;
  }
  ACCEL_HD bool operator()(int64_t t) const {
    using A = OpMath<T>;
    const int64_t c = t % d.channels, k = t / d.channels;
    const int64_t begin = k * p.rows;
    const int64_t end = begin + p.rows < d.batch * d.spatial ? begin + p.rows : d.batch * d.spatial;
    // Two passes over the chunk (the second from cache): its mean, then the squares about it.
    const A count = static_cast<A>(end - begin);
    const A mean = end > begin ? chunkSum<RunSum::Values>(c, begin, end, A(0)) / count : A(0);
    const Welford<A> w{mean, chunkSum<RunSum::Squares>(c, begin, end, mean), end - begin};
    if (p.chunks == 1) {
      BatchNormStatsSink<T>{d}(c, w);
    } else {
      reinterpret_cast<Welford<A>*>(d.workspace)[t] = w;
    }
    return true;
  }
};

// Pass 2's end of a backward: output o < C is sum(dy) of channel o, the rest sum(dy * (x -
// mean)) of channel o - C; kept in the workspace for pass 3, and the parameters' gradients.
template <class T>
struct BatchNormGradSink {
  BatchNormDesc d;
  ACCEL_HD void operator()(int64_t o, OpMath<T> v) const {
    using A = OpMath<T>;
    reinterpret_cast<A*>(d.workspace)[o] = v;
    if (o < d.channels) {
      if (d.dbias) reinterpret_cast<A*>(d.dbias)[o] = v;
    } else if (d.dweight) {
      A mean, invstd;
      normStats<T>(d, o - d.channels, mean, invstd);
      reinterpret_cast<A*>(d.dweight)[o - d.channels] = v * invstd;
    }
  }
};

// Pass 1 of a backward, numbered as BatchNormStatsOp.
template <class T>
struct BatchNormGradStatsOp {
  BatchNormDesc d;
  BatchNormPlan p;
  int64_t elementsPerIndex() const { return p.rows; }
  ACCEL_HD bool operator()(int64_t t) const {
    using A = OpMath<T>;
    const int64_t c = t % d.channels, k = t / d.channels;
    const int64_t begin = k * p.rows;
    const int64_t end = begin + p.rows < d.batch * d.spatial ? begin + p.rows : d.batch * d.spatial;
    A mean, invstd;
    normStats<T>(d, c, mean, invstd);
    A sum_dy = A(0), dotp = A(0);
    for (int64_t j = begin; j < end;) {
      const int64_t n = j / d.spatial, s = j % d.spatial;
      const int64_t len = end - j < d.spatial - s ? end - j : d.spatial - s;
      const T* dy = d.dy.at<const T>(n, c, s);
      sum_dy += runSum<RunSum::Values>(dy, d.dy.stride_s, dy, d.dy.stride_s, len, A(0));
      dotp += runSum<RunSum::Products>(d.x.at<const T>(n, c, s), d.x.stride_s, dy, d.dy.stride_s,
                                       len, mean);
      j += len;
    }
    if (p.chunks == 1) {
      const BatchNormGradSink<T> sink{d};
      sink(c, sum_dy);
      sink(d.channels + c, dotp);
    } else {
      A* partial = reinterpret_cast<A*>(d.workspace) + 2 * d.channels + k * 2 * d.channels;
      partial[c] = sum_dy;
      partial[d.channels + c] = dotp;
    }
    return true;
  }
};

// Pass 3, over rows of `out` (y or dx): rows (n, c) of S elements, or, when the channels are
// out's densest dimension (channels-last), rows (n, s) of C elements.
struct BatchNormRows {
  bool channels_inner;
  int64_t rows, width;
};

inline BatchNormRows batchNormRows(const BatchNormDesc& d, const BatchNormTensor& out) {
  const bool inner = out.stride_c < out.stride_s && d.spatial > 1;
  return {inner, d.batch * (inner ? d.spatial : d.channels), inner ? d.channels : d.spatial};
}

// y = x * alpha + beta, with alpha = invstd * weight and beta = bias - mean * alpha.
template <class T>
struct BatchNormForwardOp {
  BatchNormDesc d;
  bool channels_inner;
  ACCEL_HD void coefficients(int64_t c, OpMath<T>& alpha, OpMath<T>& beta) const {
    using A = OpMath<T>;
    A mean, invstd;
    normStats<T>(d, c, mean, invstd);
    alpha = d.weight ? invstd * channelValue<T>(d.weight, c) : invstd;
    beta = (d.bias ? channelValue<T>(d.bias, c) : A(0)) - mean * alpha;
  }
  ACCEL_HD void operator()(int64_t r, int64_t begin, int64_t end) const {
    using A = OpMath<T>;
    A alpha, beta;
    if (channels_inner) {
      const int64_t n = r / d.spatial, s = r % d.spatial;
      for (int64_t c = begin; c < end; ++c) {
        coefficients(c, alpha, beta);
        *d.y.at<T>(n, c, s) = castTo<T>(castTo<A>(*d.x.at<const T>(n, c, s)) * alpha + beta);
      }
      return;
    }
    const int64_t n = r / d.channels, c = r % d.channels;
    coefficients(c, alpha, beta);
    const T* x = d.x.at<const T>(n, c, 0);
    T* y = d.y.at<T>(n, c, 0);
    if (d.x.stride_s == 1 && d.y.stride_s == 1) {
      for (int64_t s = begin; s < end; ++s) y[s] = castTo<T>(castTo<A>(x[s]) * alpha + beta);
    } else {
      for (int64_t s = begin; s < end; ++s)
        y[s * d.y.stride_s] = castTo<T>(castTo<A>(x[s * d.x.stride_s]) * alpha + beta);
    }
  }
};

// Training: dx = (dy - sum_dy / M - (x - mean) * k) * invstd * weight, k = dotp * invstd^2 / M.
// Evaluation: dx = dy * invstd * weight.
template <class T>
struct BatchNormBackwardOp {
  BatchNormDesc d;
  bool channels_inner;
  // dx = (dy - shift - (x - mean) * k) * scale.
  ACCEL_HD void coefficients(int64_t c, OpMath<T>& mean, OpMath<T>& k, OpMath<T>& shift,
                             OpMath<T>& scale) const {
    using A = OpMath<T>;
    A invstd;
    normStats<T>(d, c, mean, invstd);
    scale = d.weight ? invstd * channelValue<T>(d.weight, c) : invstd;
    k = shift = A(0);
    if (d.training) {
      const A* sums = reinterpret_cast<const A*>(d.workspace);
      const A m = static_cast<A>(d.batch * d.spatial);
      k = sums[d.channels + c] * invstd * invstd / m;
      shift = sums[c] / m;
    }
  }
  ACCEL_HD OpMath<T> gradAt(T dy, T x, OpMath<T> mean, OpMath<T> k, OpMath<T> shift,
                            OpMath<T> scale) const {
    using A = OpMath<T>;
    return (castTo<A>(dy) - shift - (castTo<A>(x) - mean) * k) * scale;
  }
  ACCEL_HD void operator()(int64_t r, int64_t begin, int64_t end) const {
    using A = OpMath<T>;
    A mean, k, shift, scale;
    if (channels_inner) {
      const int64_t n = r / d.spatial, s = r % d.spatial;
      for (int64_t c = begin; c < end; ++c) {
        coefficients(c, mean, k, shift, scale);
        *d.dx.at<T>(n, c, s) = castTo<T>(
            gradAt(*d.dy.at<const T>(n, c, s), *d.x.at<const T>(n, c, s), mean, k, shift, scale));
      }
      return;
    }
    const int64_t n = r / d.channels, c = r % d.channels;
    coefficients(c, mean, k, shift, scale);
    const T* dy = d.dy.at<const T>(n, c, 0);
    const T* x = d.x.at<const T>(n, c, 0);
    T* dx = d.dx.at<T>(n, c, 0);
    if (d.dy.stride_s == 1 && d.x.stride_s == 1 && d.dx.stride_s == 1) {
      for (int64_t s = begin; s < end; ++s)
        dx[s] = castTo<T>(gradAt(dy[s], x[s], mean, k, shift, scale));
    } else {
      for (int64_t s = begin; s < end; ++s)
        dx[s * d.dx.stride_s] =
            castTo<T>(gradAt(dy[s * d.dy.stride_s], x[s * d.x.stride_s], mean, k, shift, scale));
    }
  }
};

struct BatchNormTable {
  rt::Error (*forward)(const BatchNormDesc& d, rt::Stream stream);
  rt::Error (*backward)(const BatchNormDesc& d, rt::Stream stream);
  // The workspace a forward (backward = false) or backward on `stream` needs, in bytes.
  int64_t (*workspace_bytes)(const BatchNormDesc& d, bool backward, rt::Stream stream);
  template <class Exec>
  static BatchNormTable make();
};
const BatchNormTable& batchNormTable();  // the build of the driver in use

// Exec is a driver's PlanExecutor (scanGeometry) with forEach and forRows.
template <class Exec>
BatchNormPlan planBatchNorm(const BatchNormDesc& d, rt::Stream stream) {
  return planBatchNorm(d.channels, d.batch * d.spatial, Exec::scanGeometry(stream));
}

template <class Exec>
int64_t batchNormWorkspaceBytes(const BatchNormDesc& d, bool backward, rt::Stream stream) {
  const BatchNormPlan p = planBatchNorm<Exec>(d, stream);
  return dispatchDType(d.dtype, [&](auto tag) -> int64_t {
    using A = OpMath<typename decltype(tag)::type>;
    if (backward) {
      const int64_t partials = p.chunks > 1 ? columnScratchElements(2 * d.channels, p.chunks) : 0;
      return (2 * d.channels + partials) * int64_t(sizeof(A));
    }
    if (!d.training || p.chunks == 1) return 0;
    return columnScratchElements(d.channels, p.chunks) * int64_t(sizeof(Welford<A>));
  });
}

template <class Exec, class F>
rt::Error withBatchNormType(const BatchNormDesc& d, F&& f) {
  if (!isSupported(d.dtype)) return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) -> rt::Error {
    using T = typename decltype(tag)::type;
    if constexpr (isFloating<T>) {
      return f(tag);
    } else {
      return rt::Error::InvalidValue;
    }
  });
}

template <class Exec>
rt::Error launchBatchNormForward(const BatchNormDesc& d, rt::Stream stream) {
  if (d.channels == 0) return rt::Error::Success;
  return withBatchNormType<Exec>(d, [&](auto tag) -> rt::Error {
    using T = typename decltype(tag)::type;
    using A = OpMath<T>;
    if (d.training) {
      const BatchNormPlan p = planBatchNorm<Exec>(d, stream);
      if (p.chunks > 1 && d.workspace == nullptr) return rt::Error::InvalidValue;
      if (rt::Error e =
              Exec::forEach(p.chunks * d.channels, false, BatchNormStatsOp<T>{d, p}, stream);
          e != rt::Error::Success)
        return e;
      if (p.chunks > 1) {
        if (rt::Error e = mergeColumnPartials<Exec>(
                VarReducer<T, A>{A(0), false}, BatchNormStatsSink<T>{d},
                reinterpret_cast<Welford<A>*>(d.workspace), d.channels, p.chunks, stream);
            e != rt::Error::Success)
          return e;
      }
    }
    const BatchNormRows rows = batchNormRows(d, d.y);
    return Exec::forRows(rows.rows, rows.width, BatchNormForwardOp<T>{d, rows.channels_inner},
                         stream);
  });
}

template <class Exec>
rt::Error launchBatchNormBackward(const BatchNormDesc& d, rt::Stream stream) {
  if (d.channels == 0) return rt::Error::Success;
  if (d.workspace == nullptr) return rt::Error::InvalidValue;
  return withBatchNormType<Exec>(d, [&](auto tag) -> rt::Error {
    using T = typename decltype(tag)::type;
    using A = OpMath<T>;
    if (d.dweight || d.dbias || (d.dx.data && d.training)) {
      const BatchNormPlan p = planBatchNorm<Exec>(d, stream);
      if (rt::Error e =
              Exec::forEach(p.chunks * d.channels, false, BatchNormGradStatsOp<T>{d, p}, stream);
          e != rt::Error::Success)
        return e;
      if (p.chunks > 1) {
        if (rt::Error e =
                mergeColumnPartials<Exec>(SumReducer<A, A>{A(1)}, BatchNormGradSink<T>{d},
                                          reinterpret_cast<A*>(d.workspace) + 2 * d.channels,
                                          2 * d.channels, p.chunks, stream);
            e != rt::Error::Success)
          return e;
      }
    }
    if (!d.dx.data) return rt::Error::Success;
    const BatchNormRows rows = batchNormRows(d, d.dx);
    return Exec::forRows(rows.rows, rows.width, BatchNormBackwardOp<T>{d, rows.channels_inner},
                         stream);
  });
}

template <class Exec>
BatchNormTable BatchNormTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(BatchNormTable::forward)>(&launchBatchNormForward<Exec>),
          static_cast<decltype(BatchNormTable::backward)>(&launchBatchNormBackward<Exec>),
          static_cast<decltype(BatchNormTable::workspace_bytes)>(&batchNormWorkspaceBytes<Exec>)};
}

}  // namespace accel::kernels
