// The sort family: a stable sort of many equal-length slices, as a bottom-up merge sort in
// fixed-size output tiles planned by planSort (below), ping-ponging between the buffers and the
// scratch; topk's preselection of each tile's first k keys; and the binary search of values in
// sorted rows (searchsorted, bucketize). The same
// functors run on the host pool and as CUDA kernels (Exec::forEach, see the executors).
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

// Top-k preselection: each slice (row-major [nslices, n]) is cut into n / tile tiles of `tile`
// keys, the last taking the remainder (so every tile holds at least k >= 1 keys). For each tile,
// out_keys / out_idx ([nslices, tiles, k]) receive the first k keys of the tile's stable sort
// and their positions in the slice. The stable sort of a slice's candidates, in tile order,
// then starts with the first k of the slice's own stable sort: topk's answer.
struct TopkDesc {
  const char* keys = nullptr;
  char* out_keys = nullptr;
  int64_t* out_idx = nullptr;
  DType dtype = DType::Float;
  int64_t nslices = 0, n = 0, tile = 0, k = 0;
  bool descending = false;
};

struct SortTable {
  rt::Error (*sort)(const SortDesc& d, rt::Stream stream);
  rt::Error (*search)(const SearchDesc& d, rt::Stream stream);
  rt::Error (*topk_tiles)(const TopkDesc& d, rt::Stream stream);
  template <class Exec>
  static SortTable make();
};

const SortTable& sortTable();  // the build of the driver in use

// Whether a goes strictly before b; NaN is the largest value (so first when descending, which
// is the ascending order of (b, a)). Bitwise, not short-circuit: the merge loop has no branch.
template <class T>
ACCEL_HD inline bool sortsBefore(T a, T b, bool descending) {
  const OpMath<T> x = static_cast<OpMath<T>>(descending ? b : a);
  const OpMath<T> y = static_cast<OpMath<T>>(descending ? a : b);
  if constexpr (isFloating<T>) return (x < y) | ((y != y) & !(x != x));
  return x < y;
}

// --- the sort plan -----------------------------------------------------------------------------
// launchSort is a bottom-up merge sort in fixed-size output tiles of each slice. The first
// launch sorts every tile on its own (insertion-sorted runs of kSortRun keys, merged within the
// tile). Then each merge pass w = tile, 2 tile, 4 tile, ... (while w < n) merges neighbouring
// sorted runs of w keys: each task writes one output tile, after finding where that tile starts
// and ends in the two runs by binary searches along the merge path (the diagonal search). Every
// launch thus has the same tasks, nslices * ceil(n / tile), however wide its runs: no pass is
// left with a few long serial merges. The buffers ping-pong; the first launch writes to
// whichever makes the last pass end in keys / indices. The result is the stable sort, which is
// unique: it does not depend on the tile, so the drivers may plan different tiles.

constexpr int64_t kSortMinTile = 32;
constexpr int64_t kSortMaxTile = 512;
constexpr int64_t kSortRun = 16;

struct SortPlan {
  int64_t tile = 0;             // output keys per task, a power of two
  int64_t tiles_per_slice = 0;  // the last one may be shorter
  int64_t tasks = 0;            // of every launch: nslices * tiles_per_slice
  int passes = 0;               // merge passes after the tile sort
};

// units: the tasks the device runs at once (PlanExecutor: units x kSortTasksPerUnit). The tile
// is the largest power of two in [kSortMinTile, kSortMaxTile], no longer than a slice needs,
// that still gives every unit a task; longer tiles mean fewer passes over memory.
ACCEL_HD inline SortPlan planSort(int64_t nslices, int64_t n, int64_t units) {
  SortPlan p;
  if (nslices <= 0 || n <= 0) return p;
  int64_t tile = kSortMinTile;
  while (tile < kSortMaxTile && tile < n) tile *= 2;
  while (tile > kSortMinTile && nslices * ((n + tile - 1) / tile) < units) tile /= 2;
  p.tile = tile;
  p.tiles_per_slice = (n + tile - 1) / tile;
  p.tasks = nslices * p.tiles_per_slice;
  for (int64_t w = tile; w < n; w *= 2) ++p.passes;
  return p;
}

// The keys [lo, hi) of the slice at `base` that task `task` writes in every launch.
struct SortTile {
  int64_t base, lo, hi;
};

ACCEL_HD inline SortTile sortTile(const SortPlan& p, int64_t n, int64_t task) {
  const int64_t lo = task % p.tiles_per_slice * p.tile;
  return {task / p.tiles_per_slice * n, lo, lo + p.tile < n ? lo + p.tile : n};
}

// Keys and indices moving from one buffer pair to the other.
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

// Merges the source runs [i, i_end) and [j, j_end) into dst from position o on. Ties take the
// left run first: that makes the sort stable. A step picks its run by arithmetic, not a branch
// (compilers keep it a select), in stretches where no run can run out. With both_ends, the back
// half of the outputs is taken from the runs' ends (the greater key last, ties the right one)
// while the front half is taken from their starts: two independent chains of loads and
// compares, which doubles the work per latency in cache (the tile sort); streaming from memory
// (the merge passes), the extra streams cost more than that wins (measured on the host).
template <class T>
ACCEL_HD void mergeRange(const KeysAndIndices<T>& buf, int64_t i, int64_t i_end, int64_t j,
                         int64_t j_end, int64_t o, bool descending, bool both_ends) {
  const T* k = buf.src_keys;
  const int64_t i0 = i, j0 = j;
  int64_t ib = i_end, jb = j_end, ob = o + (i_end - i) + (j_end - j);
  int64_t front = both_ends ? (ob - o) / 2 : ob - o, back = ob - o - front;  // outputs left
  auto front_step = [&] {
    const int64_t r = sortsBefore(k[j], k[i], descending);
    buf.move(o++, i + ((j - i) & -r));
    j += r;
    i += 1 - r;
  };
  for (;;) {
    int64_t steps = front < back ? front : back;
    if (i_end - i < steps) steps = i_end - i;
    if (j_end - j < steps) steps = j_end - j;
    if (ib - i0 < steps) steps = ib - i0;
    if (jb - j0 < steps) steps = jb - j0;
    if (steps <= 0) break;
    front -= steps;
    back -= steps;
    for (; steps > 0; --steps) {
      front_step();
      const int64_t l = sortsBefore(k[jb - 1], k[ib - 1], descending);
      buf.move(--ob, jb - 1 + ((ib - jb) & -l));
      ib -= l;
      jb -= 1 - l;
    }
  }
  for (;;) {  // the front alone
    int64_t steps = front;
    if (i_end - i < steps) steps = i_end - i;
    if (j_end - j < steps) steps = j_end - j;
    if (steps <= 0) break;
    front -= steps;
    for (; steps > 0; --steps) front_step();
  }
  for (; front > 0; --front) buf.move(o++, i < i_end ? i++ : j++);  // one run is left
  for (; back > 0; --back) {
    const bool l = jb == j0 || (ib > i0 && sortsBefore(k[jb - 1], k[ib - 1], descending));
    buf.move(--ob, l ? --ib : --jb);
  }
}

// The merge path of the runs [lo, mid) and [mid, hi): how many of the merge's first `diag`
// outputs come from the left run. Left key m is among them exactly when right key
// diag - 1 - m does not sort strictly before it.
template <class T>
ACCEL_HD int64_t mergePath(const T* k, int64_t lo, int64_t mid, int64_t hi, int64_t diag,
                           bool descending) {
  int64_t a = diag > hi - mid ? diag - (hi - mid) : 0;
  int64_t b = diag < mid - lo ? diag : mid - lo;
  while (a < b) {
    const int64_t m = a + (b - a) / 2;
    if (sortsBefore(k[mid + diag - 1 - m], k[lo + m], descending))
      b = m;
    else
      a = m + 1;
  }
  return a;
}

// The first launch: task t sorts its tile of keys[0] into buffer `target`, with the keys'
// positions in the slice as their indices.
template <class T>
struct TileSortOp {
  T* keys[2];
  int64_t* idx[2];
  SortPlan plan;
  int64_t n;
  int target;
  bool descending;
  ACCEL_HD int64_t elementsPerIndex() const { return plan.tile; }
  ACCEL_HD bool operator()(int64_t task) const {
    const SortTile t = sortTile(plan, n, task);
    const int64_t len = t.hi - t.lo;
    int levels = 0;
    for (int64_t w = kSortRun; w < len; w *= 2) ++levels;
    int cur = target ^ (levels & 1);  // the runs ping-pong `levels` times to end in target
    const T* in = keys[0] + t.base;
    T* k = keys[cur] + t.base;
    int64_t* x = idx[cur] + t.base;
    for (int64_t run = t.lo; run < t.hi; run += kSortRun) {
      const int64_t run_end = run + kSortRun < t.hi ? run + kSortRun : t.hi;
      for (int64_t p = run; p < run_end; ++p) {  // insertion sort: in[p] is read before k[p]
        const T key = in[p];                     // is written, so k may be in
        int64_t q = p;
        for (; q > run && sortsBefore(key, k[q - 1], descending); --q) {
          k[q] = k[q - 1];
          x[q] = x[q - 1];
        }
        k[q] = key;
        x[q] = p;
      }
    }
    for (int64_t w = kSortRun; w < len; w *= 2, cur = 1 - cur) {
      const KeysAndIndices<T> buf{keys[cur], idx[cur], keys[1 - cur], idx[1 - cur]};
      for (int64_t lo = t.base + t.lo; lo < t.base + t.hi; lo += 2 * w) {
        const int64_t mid = lo + w < t.base + t.hi ? lo + w : t.base + t.hi;
        const int64_t hi = lo + 2 * w < t.base + t.hi ? lo + 2 * w : t.base + t.hi;
        mergeRange(buf, lo, mid, mid, hi, lo, descending, /*both_ends=*/true);
      }
    }
    return true;
  }
};

// A merge pass over runs of `width` (a multiple of the tile): task t writes its output tile.
template <class T>
struct MergeTileOp {
  KeysAndIndices<T> buf;
  SortPlan plan;
  int64_t n, width;
  bool descending;
  ACCEL_HD int64_t elementsPerIndex() const { return plan.tile; }
  ACCEL_HD bool operator()(int64_t task) const {
    const SortTile t = sortTile(plan, n, task);
    const int64_t lo = t.lo - t.lo % (2 * width);
    const int64_t mid = lo + width < n ? lo + width : n;
    const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
    // The tile's outputs are the merge of the left keys [a0, a1) and the right keys [b0, b1).
    const T* k = buf.src_keys + t.base;
    const int64_t a0 = mergePath(k, lo, mid, hi, t.lo - lo, descending);
    const int64_t a1 = mergePath(k, lo, mid, hi, t.hi - lo, descending);
    const int64_t b0 = t.lo - lo - a0, b1 = t.hi - lo - a1;
    mergeRange(buf, t.base + lo + a0, t.base + lo + a1, t.base + mid + b0, t.base + mid + b1,
               t.base + t.lo, descending, /*both_ends=*/false);
    return true;
  }
};

// Exec is a PlanExecutor (the driver's numbers: units(stream), kSortTasksPerUnit).
template <class Exec>
rt::Error launchSort(const SortDesc& d, rt::Stream stream) {
  if (!isSupported(d.dtype) || d.nslices < 0 || d.n < 0) return rt::Error::InvalidValue;
  if (d.nslices * d.n == 0) return rt::Error::Success;
  if (!d.keys || !d.indices || !d.tmp_keys || !d.tmp_indices) return rt::Error::InvalidValue;
  const SortPlan plan = planSort(d.nslices, d.n, Exec::units(stream) * Exec::kSortTasksPerUnit);
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* keys[2] = {reinterpret_cast<T*>(d.keys), reinterpret_cast<T*>(d.tmp_keys)};
    int64_t* idx[2] = {d.indices, d.tmp_indices};
    int cur = plan.passes % 2;
    const TileSortOp<T> tiles{{keys[0], keys[1]}, {idx[0], idx[1]}, plan, d.n, cur, d.descending};
    if (rt::Error e = Exec::forEach(plan.tasks, false, tiles, stream); e != rt::Error::Success)
      return e;
    for (int64_t width = plan.tile; width < d.n; width *= 2, cur = 1 - cur) {
      const MergeTileOp<T> op{
          {keys[cur], idx[cur], keys[1 - cur], idx[1 - cur]}, plan, d.n, width, d.descending};
      if (rt::Error e = Exec::forEach(plan.tasks, false, op, stream); e != rt::Error::Success)
        return e;
    }
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

// One tile's first k keys in its output row: a heap whose root is the worst kept key (ties:
// the later position is worse), so a key enters when it sorts strictly before the root, which
// few do once the heap is full. Blocks of kTopkBlock keys are first tested against the root at
// once (a loop the host runs in vector lanes); only a block with a candidate is walked. The
// row is heap-sorted at the end, best first.
constexpr int64_t kTopkBlock = 32;

template <class T>
struct TopkTileOp {
  TopkDesc d;
  ACCEL_HD int64_t elementsPerIndex() const { return d.tile; }

  // Whether entry a of the row is worse than entry b.
  ACCEL_HD bool worse(const T* keys, const int64_t* idx, int64_t a, int64_t b) const {
    if (sortsBefore(keys[b], keys[a], d.descending)) return true;
    return !sortsBefore(keys[a], keys[b], d.descending) && idx[a] > idx[b];
  }
  ACCEL_HD void swap(T* keys, int64_t* idx, int64_t a, int64_t b) const {
    const T k = keys[a];
    keys[a] = keys[b];
    keys[b] = k;
    const int64_t i = idx[a];
    idx[a] = idx[b];
    idx[b] = i;
  }
  // Restores the heap below p among the first `size` entries.
  ACCEL_HD void siftDown(T* keys, int64_t* idx, int64_t p, int64_t size) const {
    for (;;) {
      const int64_t l = 2 * p + 1, r = l + 1;
      int64_t top = p;
      if (l < size && worse(keys, idx, l, top)) top = l;
      if (r < size && worse(keys, idx, r, top)) top = r;
      if (top == p) return;
      swap(keys, idx, p, top);
      p = top;
    }
  }

  ACCEL_HD bool operator()(int64_t t) const {
    const int64_t tiles = d.n / d.tile;
    const int64_t slice = t / tiles, first = t % tiles * d.tile;
    const int64_t last = t % tiles == tiles - 1 ? d.n : first + d.tile;
    const T* x = reinterpret_cast<const T*>(d.keys) + slice * d.n;
    T* keys = reinterpret_cast<T*>(d.out_keys) + t * d.k;
    int64_t* idx = d.out_idx + t * d.k;
    for (int64_t c = 0; c < d.k; ++c) {  // the first k keys, sifted up
      keys[c] = x[first + c];
      idx[c] = first + c;
      for (int64_t p = c; p > 0 && worse(keys, idx, p, (p - 1) / 2); p = (p - 1) / 2)
        swap(keys, idx, p, (p - 1) / 2);
    }
    auto offer = [&](int64_t j) {
      if (!sortsBefore(x[j], keys[0], d.descending)) return;
      keys[0] = x[j];
      idx[0] = j;
      siftDown(keys, idx, 0, d.k);
    };
    int64_t j = first + d.k;
    for (; j + kTopkBlock <= last; j += kTopkBlock) {
      const T root = keys[0];
      bool any = false;
      for (int64_t q = 0; q < kTopkBlock; ++q) any |= sortsBefore(x[j + q], root, d.descending);
      if (any)
        for (int64_t q = 0; q < kTopkBlock; ++q) offer(j + q);
    }
    for (; j < last; ++j) offer(j);
    for (int64_t end = d.k - 1; end > 0; --end) {  // the worst to the back, in turn
      swap(keys, idx, 0, end);
      siftDown(keys, idx, 0, end);
    }
    return true;
  }
};

template <class Exec>
rt::Error launchTopkTiles(const TopkDesc& d, rt::Stream stream) {
  if (!isSupported(d.dtype) || d.nslices < 0 || d.k < 1 || d.tile < d.k || d.n < d.tile)
    return rt::Error::InvalidValue;
  if (d.nslices == 0) return rt::Error::Success;
  if (!d.keys || !d.out_keys || !d.out_idx) return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Exec::forEach(d.nslices * (d.n / d.tile), false, TopkTileOp<T>{d}, stream);
  });
}

template <class Exec>
SortTable SortTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(SortTable::sort)>(&launchSort<Exec>),
          static_cast<decltype(SortTable::search)>(&launchSearch<Exec>),
          static_cast<decltype(SortTable::topk_tiles)>(&launchTopkTiles<Exec>)};
}

}  // namespace accel::kernels
