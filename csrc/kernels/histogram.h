// The histogram kernels of the indexing family (IndexTable::histc and ::bincount, index.h):
// histc (equal-width bins over [lo, hi]) and bincount (counts, or sums of weights, per
// non-negative integer value). Each element is one functor call that adds into its bin with
// the executor's read-modify-write (atomics on CUDA; one thread, in element order, on the
// host): Exec::forEach(n, /*serial=*/true, f, stream).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/elementwise.h"

namespace accel::kernels {

// The bin arithmetic's type: the opmath type of a float, double (exact) for an integer.
template <class T>
using HistcMath = std::conditional_t<isFloating<T>, OpMath<T>, double>;

template <class T, class Accumulate>
struct HistcOp {
  ElementwiseDesc d;
  HistcMath<T> lo, hi;
  int64_t bins;
  T* out;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t off[1];
    offsetsOf(d, i, off);
    const HistcMath<T> x = castTo<HistcMath<T>>(*reinterpret_cast<const T*>(d.op[0].data + off[0]));
    if (!(x >= lo && x <= hi)) return true;  // outside the range, or NaN
    int64_t b = static_cast<int64_t>((x - lo) * static_cast<HistcMath<T>>(bins) / (hi - lo));
    if (b >= bins) b = bins - 1;
    Accumulate::add(out + b, OpMath<T>(1));
    return true;
  }
};

template <class O, class Accumulate>
struct BincountOp {
  ElementwiseDesc d;
  O* out;
  int64_t size;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t off[2];
    offsetsOf(d, i, off);
    const int64_t x = *reinterpret_cast<const int64_t*>(d.op[0].data + off[0]);
    if (x < 0 || x >= size) return false;
    const O w = d.noperands == 2 ? loadAs<O>(d.op[1].data + off[1], d.op[1].dtype) : O(1);
    Accumulate::add(out + x, w);
    return true;
  }
};

template <class Exec>
rt::Error launchHistc(const ElementwiseDesc& d, double lo, double hi, int64_t bins, char* out,
                      rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  if (bins <= 0 || !(lo < hi) || out == nullptr || d.op[0].dtype == DType::Bool)
    return rt::Error::InvalidValue;
  if (d.numel == 0) return rt::Error::Success;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = HistcMath<T>;
    return Exec::forEach(
        d.numel, true,
        HistcOp<T, typename Exec::Accumulate>{d, static_cast<C>(lo), static_cast<C>(hi), bins,
                                              reinterpret_cast<T*>(out)},
        stream);
  });
}

template <class Exec>
rt::Error launchBincount(const ElementwiseDesc& d, char* out, DType out_dtype, int64_t size,
                         rt::Stream stream) {
  if (d.noperands != 1 && d.noperands != 2) return rt::Error::InvalidValue;
  if (rt::Error e = validate(d, d.noperands); e != rt::Error::Success) return e;
  if (d.op[0].dtype != DType::Int64 || out == nullptr || size < 0) return rt::Error::InvalidValue;
  const DType want = d.noperands == 1 ? DType::Int64 : out_dtype;
  if (out_dtype != want || (d.noperands == 2 && want != DType::Float && want != DType::Double))
    return rt::Error::InvalidValue;
  if (d.numel == 0) return rt::Error::Success;
  using A = typename Exec::Accumulate;
  switch (out_dtype) {
    case DType::Int64:
      return Exec::forEach(
          d.numel, true, BincountOp<int64_t, A>{d, reinterpret_cast<int64_t*>(out), size}, stream);
    case DType::Float:
      return Exec::forEach(d.numel, true,
                           BincountOp<float, A>{d, reinterpret_cast<float*>(out), size}, stream);
    default:
      return Exec::forEach(d.numel, true,
                           BincountOp<double, A>{d, reinterpret_cast<double*>(out), size}, stream);
  }
}

}  // namespace accel::kernels
