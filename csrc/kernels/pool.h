// The pooling family: max pooling over planes of up to three spatial dimensions. The forward
// takes each window's maximum and its position in the input plane, in CPU's order (a NaN
// wins, the last one seen; otherwise the first maximum); the backward gives each input
// element the sum of the gradients of the windows that picked it, added in the windows'
// order, which is the order CPU's scatter adds them in. Both read the input in place: no
// padded copy, no gathered windows. Exec::forRows runs them (whole rows on the host, a thread
// per element on CUDA).
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/reduce_math.h"

namespace accel::kernels {

// Dense planes [planes, in0, in1, in2] and [planes, out0, out1, out2]; a 2-D or 1-D pooling
// leaves the leading dimensions at size 1 (kernel 1, stride 1, no padding, dilation 1).
struct PoolDesc {
  const char* x = nullptr;     // forward input
  char* y = nullptr;           // forward values
  int64_t* indices = nullptr;  // the picked positions in the input plane (backward reads them)
  const char* dy = nullptr;    // backward: the gradient of y
  char* dx = nullptr;          // backward: the gradient of x
  DType dtype = DType::Float;
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};

  ACCEL_HD int64_t inPlane() const { return in[0] * in[1] * in[2]; }
  ACCEL_HD int64_t outPlane() const { return out[0] * out[1] * out[2]; }
  // Window o along dimension i covers [lo, hi) by steps of dil[i] (ATen's bounds).
  ACCEL_HD void window(int i, int64_t o, int64_t& lo, int64_t& hi) const {
    lo = o * s[i] - pad[i];
    hi = lo + (k[i] - 1) * dil[i] + 1 < in[i] ? lo + (k[i] - 1) * dil[i] + 1 : in[i];
    while (lo < 0) lo += dil[i];
  }
  // The windows along dimension i that can hold input position p: [lo, hi].
  ACCEL_HD void windowsOf(int i, int64_t p, int64_t& lo, int64_t& hi) const {
    const int64_t first = p + pad[i] - (k[i] - 1) * dil[i];
    lo = first <= 0 ? 0 : (first + s[i] - 1) / s[i];
    hi = (p + pad[i]) / s[i] < out[i] - 1 ? (p + pad[i]) / s[i] : out[i] - 1;
  }
};

struct PoolTable {
  // d.y and d.indices from d.x; floating dtypes.
  rt::Error (*max_pool)(const PoolDesc& d, rt::Stream stream);
  // d.dx from d.dy and d.indices.
  rt::Error (*max_pool_backward)(const PoolDesc& d, rt::Stream stream);
  template <class Exec>
  static PoolTable make();
};

const PoolTable& poolTable();  // the build of the driver in use

// Row r of the output is (plane, o0, o1); its elements run along dimension 2.
template <class T>
struct MaxPoolOp {
  PoolDesc d;
  ACCEL_HD void operator()(int64_t row, int64_t begin, int64_t end) const {
    const int64_t o1 = row % d.out[1], o0 = row / d.out[1] % d.out[0];
    const int64_t plane = row / (d.out[1] * d.out[0]);
    const T* x = reinterpret_cast<const T*>(d.x) + plane * d.inPlane();
    int64_t lo0, hi0, lo1, hi1;
    d.window(0, o0, lo0, hi0);
    d.window(1, o1, lo1, hi1);
    for (int64_t o2 = begin; o2 < end; ++o2) {
      int64_t lo2, hi2;
      d.window(2, o2, lo2, hi2);
      int64_t best = (lo0 * d.in[1] + lo1) * d.in[2] + lo2;
      OpMath<T> top = -std::numeric_limits<OpMath<T>>::infinity();
      for (int64_t i0 = lo0; i0 < hi0; i0 += d.dil[0])
        for (int64_t i1 = lo1; i1 < hi1; i1 += d.dil[1])
          for (int64_t i2 = lo2; i2 < hi2; i2 += d.dil[2]) {
            const int64_t at = (i0 * d.in[1] + i1) * d.in[2] + i2;
            const OpMath<T> v = castTo<OpMath<T>>(x[at]);
            if (v > top || isNan(v)) {
              top = v;
              best = at;
            }
          }
      const int64_t o = row * d.out[2] + o2;
      reinterpret_cast<T*>(d.y)[o] = x[best];
      d.indices[o] = best;
    }
  }
};

// Row r of the input is (plane, i0, i1); its elements run along dimension 2.
template <class T>
struct MaxPoolBackwardOp {
  PoolDesc d;
  ACCEL_HD void operator()(int64_t row, int64_t begin, int64_t end) const {
    const int64_t i1 = row % d.in[1], i0 = row / d.in[1] % d.in[0];
    const int64_t plane = row / (d.in[1] * d.in[0]);
    const T* dy = reinterpret_cast<const T*>(d.dy) + plane * d.outPlane();
    const int64_t* picked = d.indices + plane * d.outPlane();
    int64_t lo0, hi0, lo1, hi1, lo2, hi2;
    d.windowsOf(0, i0, lo0, hi0);
    d.windowsOf(1, i1, lo1, hi1);
    d.windowsOf(2, begin, lo2, hi2);
    const int64_t reach = (d.k[2] - 1) * d.dil[2];  // a window's span past its start
    for (int64_t i2 = begin; i2 < end; ++i2) {
      // The windows along the row move with i2: stepped, not divided, per element.
      while (hi2 + 1 < d.out[2] && (hi2 + 1) * d.s[2] - d.pad[2] <= i2) ++hi2;
      while (lo2 * d.s[2] - d.pad[2] + reach < i2) ++lo2;
      const int64_t at = (i0 * d.in[1] + i1) * d.in[2] + i2;
      // Rounded to T after each add, as CPU's += on the gradient. A window that did not pick
      // this element adds +0, which changes no sum that starts at +0: a select, not a branch
      // the predictor would miss on every other window.
      T sum = T(0);
      for (int64_t o0 = lo0; o0 <= hi0; ++o0)
        for (int64_t o1 = lo1; o1 <= hi1; ++o1)
          for (int64_t o2 = lo2; o2 <= hi2; ++o2) {
            const int64_t o = (o0 * d.out[1] + o1) * d.out[2] + o2;
            const OpMath<T> g = picked[o] == at ? castTo<OpMath<T>>(dy[o]) : OpMath<T>(0);
            sum = castTo<T>(castTo<OpMath<T>>(sum) + g);
          }
      reinterpret_cast<T*>(d.dx)[plane * d.inPlane() + at] = sum;
    }
  }
};

// Windows that do not overlap (a stride of at least the window's span, as pooling by 2 has)
// pick distinct elements: the backward then writes each window's gradient to its pick, after
// zeroing the planes, instead of visiting every input element.
struct ZeroPlanesOp {
  PoolDesc d;
  int64_t item;
  ACCEL_HD void operator()(int64_t row, int64_t begin, int64_t end) const {
    for (int64_t b = begin; b < end; ++b) d.dx[row * d.in[2] * item + b] = 0;
  }
};

template <class T>
struct MaxPoolPlaceOp {
  PoolDesc d;
  ACCEL_HD void operator()(int64_t row, int64_t begin, int64_t end) const {
    const int64_t plane = row / (d.out[0] * d.out[1]);
    T* dx = reinterpret_cast<T*>(d.dx) + plane * d.inPlane();
    for (int64_t o = row * d.out[2] + begin; o < row * d.out[2] + end; ++o)
      dx[d.indices[o]] = reinterpret_cast<const T*>(d.dy)[o];
  }
};

ACCEL_HD inline bool disjointWindows(const PoolDesc& d) {
  for (int i = 0; i < 3; ++i)
    if (d.s[i] < (d.k[i] - 1) * d.dil[i] + 1) return false;
  return true;
}

template <class Exec, bool Backward>
rt::Error launchMaxPool(const PoolDesc& d, rt::Stream stream) {
  if (!isSupported(d.dtype) || d.planes < 0) return rt::Error::InvalidValue;
  for (int i = 0; i < 3; ++i)
    if (d.in[i] < 1 || d.out[i] < 0 || d.k[i] < 1 || d.s[i] < 1 || d.dil[i] < 1 || d.pad[i] < 0)
      return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!isFloating<T>) {
      return rt::Error::InvalidValue;
    } else if constexpr (Backward) {
      const int64_t in_rows = d.planes * d.in[0] * d.in[1];
      if (!disjointWindows(d))
        return Exec::forRows(in_rows, d.in[2], MaxPoolBackwardOp<T>{d}, stream);
      const int64_t item = static_cast<int64_t>(sizeof(T));
      if (rt::Error e = Exec::forRows(in_rows, d.in[2] * item, ZeroPlanesOp{d, item}, stream);
          e != rt::Error::Success)
        return e;
      return Exec::forRows(d.planes * d.out[0] * d.out[1], d.out[2], MaxPoolPlaceOp<T>{d}, stream);
    } else {
      return Exec::forRows(d.planes * d.out[0] * d.out[1], d.out[2], MaxPoolOp<T>{d}, stream);
    }
  });
}

template <class Exec>
PoolTable PoolTable::make() {
  // The casts let nvcc resolve each function template's address.
  using Entry = decltype(PoolTable::max_pool);
  return {static_cast<Entry>(&launchMaxPool<Exec, false>),
          static_cast<Entry>(&launchMaxPool<Exec, true>)};
}

}  // namespace accel::kernels
