// Host build of the normalization family: parallel over lines (softmax), rows (layer norm) or
// query rows (attention); layer norm's weight and bias gradients as norm.h writes them.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/host/executor.h"
#include "kernels/host/lanes.h"
#include "kernels/host/vector_value.h"
#include "kernels/norm.h"
#include "kernels/tables.h"
#include "kernels/vector_math.h"
#include "runtime/host/host_launch.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {
namespace {

int64_t rowGrain(int64_t row_len) {
  return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, row_len));
}

// Sums and maxima of f(0..n) in 16 independent lanes, so the compiler can vectorize them
// (a single float accumulator forces sequential adds). 16 fill an AVX-512 register: with 8,
// GCC's AVX-512 loops shuffled pairs of iterations into the lanes and ran at half the speed.
constexpr int kLanes = 16;

template <class A, class F>
__attribute__((always_inline)) inline A laneSum(int64_t n, const F& f) {
  A acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += f(j + l);
  A s = A(0);
  for (; j < n; ++j) s += f(j);
  Vector<A, kLanes> lanes;
  std::memcpy(&lanes, acc, sizeof lanes);
  return s + sumLanes<A, kLanes>(lanes);
}

// float -> T; for bfloat16 a branch-free copy of c10's round-to-nearest-even (whose NaN branch
// stops vectorization).
template <class T, class A>
inline T storeCast(A v) {
  if constexpr (std::is_same_v<T, c10::BFloat16> && std::is_same_v<A, float>) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    return c10::BFloat16(v != v ? uint16_t(0x7FC0) : uint16_t(rounded), c10::BFloat16::from_bits());
  } else {
    return castTo<T>(v);
  }
}

// One dense softmax row: each exp once, kept in `eb` for the normalizing pass.
template <class T, class A>
__attribute__((always_inline)) inline void denseSoftmaxRowImpl(const T* xr, T* yr, int64_t n, A* eb,
                                                               bool log, bool safe) {
  const A m = vectorExtreme<true, A>(xr, n);  // a NaN makes every output NaN, as in ATen
  if (zeroLine(safe, m)) {
    std::fill(yr, yr + n, T(0));
    return;
  }
  for (int64_t j = 0; j < n; ++j) eb[j] = vexp(castTo<A>(xr[j]) - m);
  const A s = laneSum<A>(n, [eb](int64_t j) { return eb[j]; });
  if (log) {
    const A shift = m + mlog(s);
    for (int64_t j = 0; j < n; ++j) yr[j] = storeCast<T>(castTo<A>(xr[j]) - shift);
  } else {
    const A inv = A(1) / s;
    for (int64_t j = 0; j < n; ++j) yr[j] = storeCast<T>(eb[j] * inv);
  }
}

// Softmax along a dimension that is not innermost: a block of up to kColumnBlock adjacent
// lines (inner positions c .. c + width), whose elements lie side by side at every position
// along the dimension, so each pass runs over the block in vector lanes and in memory order
// (one line at a time walked the dimension `inner` elements apart, with scalar exps). Each
// line's sum adds in order along the dimension, as before.
constexpr int64_t kColumnBlock = 64;

template <class T, class A = OpMath<T>>
__attribute__((always_inline)) inline void columnSoftmaxBlockImpl(const T* x, T* y, int64_t dim,
                                                                  int64_t inner, int64_t width,
                                                                  bool log, bool safe) {
  A m[kColumnBlock], s[kColumnBlock];
  for (int64_t l = 0; l < width; ++l) {
    m[l] = lowestOf<A>();
    s[l] = A(0);
  }
  for (int64_t i = 0; i < dim; ++i) {
    const T* xi = x + i * inner;
    for (int64_t l = 0; l < width; ++l) {
      const A v = loadCast<A>(xi[l]);
      m[l] = (v != v || v > m[l]) ? v : m[l];  // a NaN makes the line NaN
    }
  }
  for (int64_t i = 0; i < dim; ++i) {
    const T* xi = x + i * inner;
    for (int64_t l = 0; l < width; ++l) s[l] += vexp(loadCast<A>(xi[l]) - m[l]);
  }
  for (int64_t l = 0; l < width; ++l) {
    // log_softmax subtracts max + log(sum); softmax multiplies exp(x - max) by 1 / sum. A
    // line of -inf that is to give zeros does so as exp(-inf - 0) * 0.
    s[l] = log ? m[l] + mlog(s[l]) : A(1) / s[l];
    if (zeroLine(safe, m[l])) m[l] = s[l] = A(0);
  }
  for (int64_t i = 0; i < dim; ++i) {
    const T* xi = x + i * inner;
    T* yi = y + i * inner;
    if (log) {
      for (int64_t l = 0; l < width; ++l) yi[l] = storeCast<T>(loadCast<A>(xi[l]) - s[l]);
    } else {
      for (int64_t l = 0; l < width; ++l)
        yi[l] = storeCast<T>(vexp(loadCast<A>(xi[l]) - m[l]) * s[l]);
    }
  }
}

template <class T>
void columnSoftmaxBlock(const T* x, T* y, int64_t dim, int64_t inner, int64_t width, bool log,
                        bool safe) {
  inWidestLanes([&] { columnSoftmaxBlockImpl(x, y, dim, inner, width, log, safe); });
}

// The softmax gradient along a dimension that is not innermost, a block of adjacent lines at a
// time (columnSoftmaxBlock's layout): each line's dot adds in order along the dimension.
template <class T, class A = OpMath<T>>
__attribute__((always_inline)) inline void columnSoftmaxGradBlockImpl(const T* g, const T* y, T* gi,
                                                                      int64_t dim, int64_t inner,
                                                                      int64_t width, bool log) {
  A dot[kColumnBlock];
  for (int64_t l = 0; l < width; ++l) dot[l] = A(0);
  for (int64_t i = 0; i < dim; ++i) {
    const T *gl = g + i * inner, *yl = y + i * inner;
    if (log) {
      for (int64_t l = 0; l < width; ++l) dot[l] += loadCast<A>(gl[l]);
    } else {
      for (int64_t l = 0; l < width; ++l) dot[l] += loadCast<A>(gl[l]) * loadCast<A>(yl[l]);
    }
  }
  for (int64_t i = 0; i < dim; ++i) {
    const T *gl = g + i * inner, *yl = y + i * inner;
    T* out = gi + i * inner;
    if (log) {
      for (int64_t l = 0; l < width; ++l)
        out[l] = storeCast<T>(loadCast<A>(gl[l]) - vexp(loadCast<A>(yl[l])) * dot[l]);
    } else {
      for (int64_t l = 0; l < width; ++l)
        out[l] = storeCast<T>(loadCast<A>(yl[l]) * (loadCast<A>(gl[l]) - dot[l]));
    }
  }
}

template <class T>
void columnSoftmaxGradBlock(const T* g, const T* y, T* gi, int64_t dim, int64_t inner,
                            int64_t width, bool log) {
  inWidestLanes([&] { columnSoftmaxGradBlockImpl(g, y, gi, dim, inner, width, log); });
}

// One dense row of the softmax gradient: softmax y * (g - sum(g * y)), log_softmax
// g - exp(y) * sum(g).
template <class T, class A = OpMath<T>>
__attribute__((always_inline)) inline void denseSoftmaxGradRowImpl(const T* g, const T* y, T* gi,
                                                                   int64_t n, bool log) {
  if (log) {
    const A dot = laneSum<A>(n, [g](int64_t j) { return castTo<A>(g[j]); });
    for (int64_t j = 0; j < n; ++j)
      gi[j] = storeCast<T>(castTo<A>(g[j]) - vexp(castTo<A>(y[j])) * dot);
  } else {
    const A dot = laneSum<A>(n, [g, y](int64_t j) { return castTo<A>(g[j]) * castTo<A>(y[j]); });
    for (int64_t j = 0; j < n; ++j) gi[j] = storeCast<T>(castTo<A>(y[j]) * (castTo<A>(g[j]) - dot));
  }
}

// One row of the layer norm forward: mean, variance about it, the normalized row.
template <class T, class A = OpMath<T>>
__attribute__((always_inline)) inline void layerNormRowImpl(const LayerNormDesc& d, int64_t i,
                                                            const T* w, const T* bias) {
  const T* x = reinterpret_cast<const T*>(d.x) + i * d.cols;
  const A mean =
      laneSum<A>(d.cols, [x](int64_t j) { return castTo<A>(x[j]); }) / static_cast<A>(d.cols);
  const A var = laneSum<A>(d.cols,
                           [x, mean](int64_t j) {
                             const A dv = castTo<A>(x[j]) - mean;
                             return dv * dv;
                           }) /
                static_cast<A>(d.cols);
  const A rstd = A(1) / msqrt(var + static_cast<A>(d.eps));
  layerNormWrite(x, w, bias, reinterpret_cast<T*>(d.y) + i * d.cols, d.cols, mean, rstd, 0, 1);
  reinterpret_cast<A*>(d.mean)[i] = mean;
  reinterpret_cast<A*>(d.rstd)[i] = rstd;
}

template <class T>
void layerNormRow(const LayerNormDesc& d, int64_t i, const T* w, const T* bias) {
  inWidestLanes([&] { layerNormRowImpl(d, i, w, bias); });
}

// One row of the layer norm backward's input gradient: its two row sums in lanes, then dx
// (norm.h's LayerNormGradCoeffs), with the weight's presence a template argument: a null
// check per element kept the loops scalar.
template <class T, bool Weighted, class A = OpMath<T>>
__attribute__((always_inline)) inline void layerNormGradRowImpl(const LayerNormDesc& d, int64_t i,
                                                                const T* w) {
  const int64_t o = i * d.cols;
  const T* dy = reinterpret_cast<const T*>(d.dy) + o;
  const T* x = reinterpret_cast<const T*>(d.x) + o;
  T* dx = reinterpret_cast<T*>(d.dx) + o;
  auto wt = [w](int64_t j) {
    if constexpr (Weighted) return castTo<A>(w[j]);
    return A(1);
  };
  const A ds = laneSum<A>(
      d.cols, [dy, x, wt](int64_t j) { return castTo<A>(dy[j]) * wt(j) * castTo<A>(x[j]); });
  const A db = laneSum<A>(d.cols, [dy, wt](int64_t j) { return castTo<A>(dy[j]) * wt(j); });
  const A rstd = reinterpret_cast<const A*>(d.rstd)[i];
  const LayerNormGradCoeffs<A> k(reinterpret_cast<const A*>(d.mean)[i], rstd, ds, db, d.cols);
  for (int64_t j = 0; j < d.cols; ++j)
    dx[j] = storeCast<T>(k.dx(rstd, castTo<A>(dy[j]), wt(j), castTo<A>(x[j])));
}

template <class T>
void layerNormGradRow(const LayerNormDesc& d, int64_t i, const T* w) {
  if (w)
    inWidestLanes([&] { layerNormGradRowImpl<T, true>(d, i, w); });
  else
    inWidestLanes([&] { layerNormGradRowImpl<T, false>(d, i, w); });
}

// One query row of attention: the scores (dot products in lanes), their exps kept in `e`, and
// the values weighted into `acc`.
template <class T, class A>
__attribute__((always_inline)) inline void attentionRowImpl(const AttentionDesc& d, int64_t row,
                                                            A* qa, A* e, A* acc) {
  const AttentionRow r = attentionRow(d, row);
  const T* q = reinterpret_cast<const T*>(d.q) + r.q;
  const T* k = reinterpret_cast<const T*>(d.k) + r.k;
  const T* v = reinterpret_cast<const T*>(d.v) + r.v;
  T* out = reinterpret_cast<T*>(d.out) + r.out;
  for (int64_t t = 0; t < d.dim; ++t) qa[t] = castTo<A>(q[t]);
  A m = lowestOf<A>();
  for (int64_t j = 0; j < r.keys; ++j) {
    const T* kj = k + j * d.k_stride[2];
    const A dot = laneSum<A>(d.dim, [qa, kj](int64_t t) { return qa[t] * castTo<A>(kj[t]); });
    e[j] = attentionScore<T>(d, r, j, dot);
    m = (isNan(e[j]) || e[j] > m) ? e[j] : m;  // a NaN makes the row NaN, as softmax
  }
  if (zeroLine(true, m)) {
    std::fill(out, out + d.value_dim, T(0));
    if (d.lse) d.lse[row] = lowestOf<float>();
    return;
  }
  for (int64_t j = 0; j < r.keys; ++j) e[j] = vexp(e[j] - m);
  const A sum = laneSum<A>(r.keys, [e](int64_t j) { return e[j]; });
  // Four keys per pass over acc: one key per pass spent its time storing and reloading acc.
  std::fill(acc, acc + d.value_dim, A(0));
  const int64_t vs = d.v_stride[2];
  int64_t j = 0;
  for (; j + 4 <= r.keys; j += 4) {
    const T *v0 = v + j * vs, *v1 = v0 + vs, *v2 = v1 + vs, *v3 = v2 + vs;
    const A p0 = e[j], p1 = e[j + 1], p2 = e[j + 2], p3 = e[j + 3];
    for (int64_t t = 0; t < d.value_dim; ++t)
      acc[t] += (p0 * castTo<A>(v0[t]) + p1 * castTo<A>(v1[t])) +
                (p2 * castTo<A>(v2[t]) + p3 * castTo<A>(v3[t]));
  }
  for (; j < r.keys; ++j) {
    const T* vj = v + j * vs;
    const A p = e[j];
    for (int64_t t = 0; t < d.value_dim; ++t) acc[t] += p * castTo<A>(vj[t]);
  }
  const A inv = A(1) / sum;
  for (int64_t t = 0; t < d.value_dim; ++t) out[t] = storeCast<T>(acc[t] * inv);
  if (d.lse) d.lse[row] = static_cast<float>(m + mlog(sum));
}

template <class F>
rt::Error dispatchFloating(DType t, F&& f) {
  return dispatchDType(t, [&](auto tag) -> rt::Error {
    using T = typename std::decay_t<decltype(tag)>::type;
    if constexpr (isFloating<T>) return f(tag);
    return rt::Error::NotSupported;
  });
}

}  // namespace

rt::Error softmax(const SoftmaxDesc& d, rt::Stream stream) {
  if (d.outer * d.dim * d.inner == 0) return rt::Error::Success;
  return dispatchFloating(d.dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using A = OpMath<T>;
    return launch(stream, d.outer * d.dim * d.inner, [d] {
      const T* x = reinterpret_cast<const T*>(d.in);
      T* y = reinterpret_cast<T*>(d.out);
      if (d.inner > 1) {
        const int64_t blocks = (d.inner + kColumnBlock - 1) / kColumnBlock;
        rt::host::parallelFor(
            0, d.outer * blocks, rowGrain(d.dim * kColumnBlock), [&](int64_t b, int64_t e) {
              for (int64_t t = b; t < e; ++t) {
                const int64_t c = t % blocks * kColumnBlock;
                const int64_t start = t / blocks * d.dim * d.inner + c;
                columnSoftmaxBlock(x + start, y + start, d.dim, d.inner,
                                   std::min(kColumnBlock, d.inner - c), d.log, d.safe);
              }
            });
        return;
      }
      // A chunk of rows in one call in the widest lanes: short rows (attention's) would
      // otherwise pay a call per row.
      rt::host::parallelFor(0, d.outer, rowGrain(d.dim), [&](int64_t b, int64_t e) {
        std::vector<A> buf(d.dim);
        inWidestLanes([&] {
          for (int64_t line = b; line < e; ++line)
            denseSoftmaxRowImpl(x + line * d.dim, y + line * d.dim, d.dim, buf.data(), d.log,
                                d.safe);
        });
      });
    });
  });
}

rt::Error softmax_backward(const SoftmaxDesc& d, rt::Stream stream) {
  if (d.outer * d.dim * d.inner == 0) return rt::Error::Success;
  return dispatchFloating(d.dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    return launch(stream, d.outer * d.dim * d.inner, [d] {
      const T* y = reinterpret_cast<const T*>(d.in);
      const T* g = reinterpret_cast<const T*>(d.grad);
      T* gi = reinterpret_cast<T*>(d.out);
      if (d.inner > 1) {
        const int64_t blocks = (d.inner + kColumnBlock - 1) / kColumnBlock;
        rt::host::parallelFor(
            0, d.outer * blocks, rowGrain(d.dim * kColumnBlock), [&](int64_t b, int64_t e) {
              for (int64_t t = b; t < e; ++t) {
                const int64_t c = t % blocks * kColumnBlock;
                const int64_t s = t / blocks * d.dim * d.inner + c;
                columnSoftmaxGradBlock(g + s, y + s, gi + s, d.dim, d.inner,
                                       std::min(kColumnBlock, d.inner - c), d.log);
              }
            });
        return;
      }
      rt::host::parallelFor(0, d.outer, rowGrain(d.dim), [&](int64_t b, int64_t e) {
        inWidestLanes([&] {
          for (int64_t line = b; line < e; ++line) {
            const int64_t s = line * d.dim;
            denseSoftmaxGradRowImpl(g + s, y + s, gi + s, d.dim, d.log);
          }
        });
      });
    });
  });
}

rt::Error layer_norm(const LayerNormDesc& d, rt::Stream stream) {
  if (d.rows == 0) return rt::Error::Success;
  return dispatchFloating(d.dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    return launch(stream, d.rows * d.cols, [d] {
      const T* w = reinterpret_cast<const T*>(d.weight);
      const T* bias = reinterpret_cast<const T*>(d.bias);
      rt::host::parallelFor(0, d.rows, rowGrain(d.cols), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) layerNormRow(d, i, w, bias);
      });
    });
  });
}

rt::Error layer_norm_backward(const LayerNormDesc& d, rt::Stream stream) {
  if (d.rows == 0 && !d.dweight && !d.dbias) return rt::Error::Success;
  const rt::Error e = dispatchFloating(d.dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if (!d.dx || d.rows == 0) return rt::Error::Success;
    return launch(stream, d.rows * d.cols, [d] {
      const T* w = reinterpret_cast<const T*>(d.weight);
      rt::host::parallelFor(0, d.rows, rowGrain(d.cols), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) layerNormGradRow(d, i, w);
      });
    });
  });
  if (e != rt::Error::Success) return e;
  return launchLayerNormParamGrad<Executor>(d, stream);
}

rt::Error attention(const AttentionDesc& d, rt::Stream stream) {
  const int64_t rows = d.batch * d.heads * d.queries;
  if (rows == 0 || d.value_dim == 0) return rt::Error::Success;
  return dispatchFloating(d.dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using A = OpMath<T>;
    const int64_t per_row = std::max<int64_t>(1, d.keys * (d.dim + d.value_dim));
    return launch(stream, rows * per_row, [d, rows, per_row] {
      rt::host::parallelFor(0, rows, rowGrain(per_row), [&](int64_t b, int64_t e) {
        std::vector<A> buf(d.dim + d.keys + d.value_dim);
        A* qa = buf.data();
        inWidestLanes([&] {
          for (int64_t row = b; row < e; ++row)
            attentionRowImpl<T>(d, row, qa, qa + d.dim, qa + d.dim + d.keys);
        });
      });
    });
  });
}

const NormTable& normTable() {
  static const NormTable table{&softmax, &softmax_backward, &layer_norm, &layer_norm_backward,
                               &attention};
  return table;
}

}  // namespace accel::kernels::host
