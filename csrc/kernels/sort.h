// The sort family: a stable sort of many equal-length slices, as bottom-up merge sort: pass w
// merges neighbouring runs of w keys, one functor call per (slice, run pair), ping-ponging between
// the buffers and the scratch; and the binary search of values in sorted rows (searchsorted,
// bucketize). The same functors run on the host pool and as CUDA kernels (Exec::forEach, see
// the executors).
#pragma once

#include "kernels/dtype.h"

namespace accel::kernels {

// nslices contiguous slices of n keys each (row-major [nslices, n], dtype `dtype`). The sort
// is stable; NaN sorts as the largest value (last ascending, first descending), like ATen.
// On return keys holds the sorted keys and indices their original positions in the slice.
// tmp_keys / tmp_indices are scratch of the same sizes.
struct SortDesc {
  char* keys = nullptr;
  int64_t* indices = nullptr;
  char* tmp_keys = nullptr;
  int64_t* tmp_indices = nullptr;
  DType dtype = DType::Float;
  int64_t nslices = 0;
  int64_t n = 0;
  bool descending = false;
};

// For each of the nrows * m values (row-major [nrows, m]) its insertion point in its row of
// `boundaries` (contiguous rows of k ascending keys: one row shared by all values, or one per
// row of values), read in the order of `sorter` (int64, the boundaries' shape, entries in
// [0, k): checked by the caller) when given. Left: the first position whose key is >= the
// value; right: the first whose key is > it; NaN is the largest, as ATen. Values and
// boundaries have one dtype; out is Int64 or Int32, row-major [nrows, m].
struct SearchDesc {
  const char* boundaries = nullptr;
  const int64_t* sorter = nullptr;  // null: boundaries are in order
  const char* values = nullptr;
  char* out = nullptr;
  DType dtype = DType::Float;
  DType out_dtype = DType::Int64;
  int64_t nrows = 0, m = 0, k = 0;
  bool shared_row = false;  // one row of boundaries for every row of values
  bool right = false;
};

struct SortTable {
  rt::Error (*sort)(const SortDesc& d, rt::Stream stream);
  rt::Error (*search)(const SearchDesc& d, rt::Stream stream);
  template <class Exec>
  static SortTable make();
};

const SortTable& sortTable();  // the build of the driver in use

// Whether a goes strictly before b; NaN is the largest value.
template <class T>
ACCEL_HD inline bool sortsBefore(T a, T b, bool descending) {
  const OpMath<T> x = static_cast<OpMath<T>>(a), y = static_cast<OpMath<T>>(b);
  if constexpr (isFloating<T>) {
    const bool xn = x != x, yn = y != y;
    if (xn || yn) return descending ? (xn && !yn) : (yn && !xn);
  }
  return descending ? y < x : x < y;
}

template <class T>
struct IotaOp {
  int64_t* indices;
  int64_t n;
  ACCEL_HD bool operator()(int64_t i) const {
    indices[i] = i % n;
    return true;
  }
};

// Keys and indices moving from one buffer pair to the other (a merge pass, or the copy back).
template <class T>
struct KeysAndIndices {
  const T* src_keys;
  const int64_t* src_idx;
  T* dst_keys;
  int64_t* dst_idx;
  ACCEL_HD void move(int64_t to, int64_t from) const {
    dst_keys[to] = src_keys[from];
    dst_idx[to] = src_idx[from];
  }
};

template <class T>
struct MergeOp {
  KeysAndIndices<T> buf;
  int64_t n, width, pairs_per_slice;
  bool descending;
  ACCEL_HD bool operator()(int64_t task) const {
    const int64_t slice = task / pairs_per_slice, pair = task % pairs_per_slice;
    const int64_t base = slice * n;
    const int64_t lo = pair * 2 * width;
    const int64_t mid = lo + width < n ? lo + width : n;
    const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
    int64_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi) {
      // Ties take the left run first: that is what makes the sort stable.
      const bool right = sortsBefore(buf.src_keys[base + j], buf.src_keys[base + i], descending);
      buf.move(base + o++, base + (right ? j++ : i++));
    }
    for (; i < mid; ++i) buf.move(base + o++, base + i);
    for (; j < hi; ++j) buf.move(base + o++, base + j);
    return true;
  }
};

template <class T>
struct CopyBackOp {
  KeysAndIndices<T> buf;
  ACCEL_HD bool operator()(int64_t i) const {
    buf.move(i, i);
    return true;
  }
};

template <class Exec>
rt::Error launchSort(const SortDesc& d, rt::Stream stream) {
  if (!isSupported(d.dtype) || d.nslices < 0 || d.n < 0) return rt::Error::InvalidValue;
  const int64_t total = d.nslices * d.n;
  if (total == 0) return rt::Error::Success;
  if (!d.keys || !d.indices || !d.tmp_keys || !d.tmp_indices) return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rt::Error e = Exec::forEach(total, false, IotaOp<T>{d.indices, d.n}, stream);
        e != rt::Error::Success)
      return e;
    T* keys[2] = {reinterpret_cast<T*>(d.keys), reinterpret_cast<T*>(d.tmp_keys)};
    int64_t* idx[2] = {d.indices, d.tmp_indices};
    int cur = 0;
    for (int64_t width = 1; width < d.n; width *= 2) {
      const int64_t pairs = (d.n + 2 * width - 1) / (2 * width);
      MergeOp<T> op{
          {keys[cur], idx[cur], keys[1 - cur], idx[1 - cur]}, d.n, width, pairs, d.descending};
      if (rt::Error e = Exec::forEach(d.nslices * pairs, false, op, stream);
          e != rt::Error::Success)
        return e;
      cur = 1 - cur;
    }
    if (cur == 1)
      return Exec::forEach(total, false, CopyBackOp<T>{{keys[1], idx[1], keys[0], idx[0]}}, stream);
    return rt::Error::Success;
  });
}

template <class T, class I>
struct SearchOp {
  SearchDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    const int64_t row = d.shared_row ? 0 : i / d.m;
    const T* keys = reinterpret_cast<const T*>(d.boundaries) + row * d.k;
    const int64_t* order = d.sorter ? d.sorter + row * d.k : nullptr;
    const OpMath<T> v = static_cast<OpMath<T>>(reinterpret_cast<const T*>(d.values)[i]);
    int64_t lo = 0, hi = d.k;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const OpMath<T> key = static_cast<OpMath<T>>(keys[order ? order[mid] : mid]);
      // Written as ATen's comparisons, so a NaN value or key goes right.
      if (d.right ? !(key > v) : !(key >= v))
        lo = mid + 1;
      else
        hi = mid;
    }
    reinterpret_cast<I*>(d.out)[i] = static_cast<I>(lo);
    return true;
  }
};

template <class Exec>
rt::Error launchSearch(const SearchDesc& d, rt::Stream stream) {
  if (!isSupported(d.dtype) || (d.out_dtype != DType::Int64 && d.out_dtype != DType::Int32) ||
      d.nrows < 0 || d.m < 0 || d.k < 0)
    return rt::Error::InvalidValue;
  const int64_t total = d.nrows * d.m;
  if (total == 0) return rt::Error::Success;
  if (!d.values || !d.out || (d.k > 0 && !d.boundaries)) return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (d.out_dtype == DType::Int32)
      return Exec::forEach(total, false, SearchOp<T, int32_t>{d}, stream);
    return Exec::forEach(total, false, SearchOp<T, int64_t>{d}, stream);
  });
}

template <class Exec>
SortTable SortTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(SortTable::sort)>(&launchSort<Exec>),
          static_cast<decltype(SortTable::search)>(&launchSearch<Exec>)};
}

}  // namespace accel::kernels
