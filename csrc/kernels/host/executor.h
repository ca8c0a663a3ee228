// The host driver's executor: how every kernel family launches on the host. Work is queued on
// the stream and split over the runtime's thread pool; short work (launch, below) runs on the
// caller when the stream is idle. Only this file knows how host kernels are launched.
//   run<Out, In...>(desc, f, stream)   an elementwise functor over an ElementwiseDesc
//   forEach(n, serial, f, stream)      an index-space functor `bool f(int64_t i)` over [0, n);
//                                      serial runs it on one thread (accumulations then add in
//                                      index order, like ATen's CPU kernels); see HasRuns
//   forRows(rows, width, f, stream)    `f(row, begin, end)` over a [rows, width] space, whole
//                                      rows at a time
#pragma once

#include <algorithm>
#include <array>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/host/lanes.h"
#include "runtime/host/host_launch.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {

// Elements per parallel chunk: large enough that the pool's overhead is noise, small enough
// that 16M elements keep every core busy.
constexpr int64_t kGrain = 32768;

// Kernels over at most this many elements take about as long as waking a stream worker:
// they are short work, run on the caller when the stream is idle (rt::host::enqueueShort).
constexpr int64_t kShortElements = 4096;

template <class W>
rt::Error launch(rt::Stream stream, int64_t numel, W&& work) {
  if (numel <= kShortElements) return rt::host::enqueueShort(stream, std::forward<W>(work));
  return rt::host::enqueue(stream, std::forward<W>(work));
}

// A functor whose operator() branches to a library call for some inputs (sin, cos) offers its
// branch-free part too: `T fast(T...)`, right where `bool isFast(T...)` holds.
template <class F, class = void>
struct HasFastPath : std::false_type {};
template <class F>
struct HasFastPath<F, std::void_t<decltype(std::declval<const F&>().isFast(
                          std::declval<typename F::compute_t>()))>> : std::true_type {};

// Raw pointers and a by-value functor, so the compiler can keep alpha in a register and
// vectorize (stores through `out` cannot then alias the functor or the descriptor). A functor
// with a fast path takes it for the whole run when a read-only pass finds every element
// eligible (a branch to a library call would keep the loop from vectorizing); otherwise the
// run goes element by element.
template <class F, class Out, class... In>
__attribute__((always_inline)) inline void denseLoop(const F f, int64_t n, Out* out,
                                                     const In*... in) {
  if constexpr (HasFastPath<F>::value) {
    using T = typename F::compute_t;
    int eligible = 1;
    for (int64_t i = 0; i < n; ++i) eligible &= f.isFast(castTo<T>(in[i])...) ? 1 : 0;
    if (eligible) {
      for (int64_t i = 0; i < n; ++i) out[i] = castTo<Out>(f.fast(castTo<T>(in[i])...));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) contiguousAt(f, i, out, in...);
}

// The dense loop over n elements at the given pointers, in the widest lanes the CPU has.
template <class F, class Out, class... In>
void denseCall(const F& f, int64_t n, Out* out, const In*... in) {
  inWidestLanes([&] { denseLoop(f, n, out, in...); });
}

template <class F, class Out, class... In, size_t... I>
void denseRange(const F& f, const ElementwiseDesc& d, int64_t begin, int64_t end,
                std::index_sequence<I...>) {
  denseCall(f, end - begin, typedData<Out>(d, 0) + begin, typedData<const In>(d, I + 1) + begin...);
}

// A walk over the rows (runs along dimension 0) of N strided operands from linear element
// `begin`: the index is divided once, then carried from row to row (a division per dimension
// per row cost more than a short row's elements: a flip of [64, 64, 3, 3] took 4.5x CPU's time).
template <int N>
struct RowCursor {
  int64_t idx[kMaxDims] = {};  // the position; idx[0] within the current row
  int64_t row[N] = {};         // each operand's byte offset of the current row's start

  RowCursor(const ElementwiseDesc& d, int64_t begin) {
    for (int dim = 0; dim < d.ndim; ++dim) {
      idx[dim] = begin % d.sizes[dim];
      begin /= d.sizes[dim];
      if (dim > 0)
        for (int k = 0; k < N; ++k) row[k] += idx[dim] * d.op[k].strides[dim];
    }
  }
  // The elements left in the current row, at most `limit`.
  int64_t run(const ElementwiseDesc& d, int64_t limit) const {
    return std::min(limit, (d.ndim > 0 ? d.sizes[0] : 1) - idx[0]);
  }
  void nextRow(const ElementwiseDesc& d) {
    idx[0] = 0;
    for (int dim = 1; dim < d.ndim; ++dim) {
      for (int k = 0; k < N; ++k) row[k] += d.op[k].strides[dim];
      if (++idx[dim] < d.sizes[dim]) return;
      for (int k = 0; k < N; ++k) row[k] -= d.sizes[dim] * d.op[k].strides[dim];
      idx[dim] = 0;
    }
  }
};

// Any strides, any dtypes: element by element, the offsets stepped along each row.
template <class F, class Out, class... In>
void stridedRange(const F& f, const ElementwiseDesc& d, int64_t begin, int64_t end) {
  constexpr int N = 1 + sizeof...(In);
  RowCursor<N> at(d, begin);
  for (int64_t i = begin; i < end; at.nextRow(d)) {
    const int64_t n = at.run(d, end - i);
    int64_t off[N];
    for (int k = 0; k < N; ++k) off[k] = at.row[k] + at.idx[0] * d.op[k].strides[0];
    for (int64_t j = 0; j < n; ++j) {
      stridedAt<F, Out, In...>(f, d, off);
      for (int k = 0; k < N; ++k) off[k] += d.op[k].strides[0];
    }
    i += n;
  }
}

// Typed operands with strides, in runs of at most kSegment elements along dimension 0: an
// operand dense along it is used in place; another is first gathered into a small buffer (a
// broadcast one is its value repeated), so every run is the dense, vectorised loop, and an
// output that is not dense is computed into a buffer and scattered. Transposed and broadcast
// operands (attention's heads, RMSNorm's per-row scale) thus cost little more than dense ones.
// The caller runs the whole walk in the widest lanes: a dispatch per run cost more than a short
// row's elements (a rotary half, rows of 16, took 2.7x CPU's time).
constexpr int64_t kSegment = 256;

template <class S>
const S* segmentInput(const ElementwiseDesc& d, int k, int64_t off, int64_t n, S* buf) {
  const char* p = d.op[k].data + off;
  const int64_t stride = d.op[k].strides[0];
  if (stride == static_cast<int64_t>(sizeof(S))) return reinterpret_cast<const S*>(p);
  if (stride == 0) {
    std::fill(buf, buf + n, *reinterpret_cast<const S*>(p));
  } else {
    for (int64_t j = 0; j < n; ++j) buf[j] = *reinterpret_cast<const S*>(p + j * stride);
  }
  return buf;
}

template <class F, class Out, class... In, size_t... I>
void stridedSegments(const F& f, const ElementwiseDesc& d, int64_t begin, int64_t end,
                     std::index_sequence<I...>) {
  constexpr int N = 1 + sizeof...(In);
  std::tuple<std::array<In, kSegment>...> in_buf;
  std::array<Out, kSegment> out_buf;
  RowCursor<N> cur(d, begin);
  const int64_t out_stride = d.op[0].strides[0];
  const bool out_dense = out_stride == static_cast<int64_t>(sizeof(Out));
  // Rows of one segment with every operand dense along them (a rotary half, a transposed
  // head): the rows along dimension 1 run back to back, each operand a constant step on, as
  // TensorIterator's 2-D loop does, instead of the cursor's walk per row (a copy of rows of
  // 32 took 2x CPU's time).
  const bool dense_rows = out_dense && d.ndim >= 2 && d.sizes[0] <= kSegment &&
                          ((d.op[I + 1].strides[0] == static_cast<int64_t>(sizeof(In))) && ...);
  for (int64_t i = begin; i < end; cur.nextRow(d)) {
    const int64_t n = cur.run(d, end - i);
    if (dense_rows && cur.idx[0] == 0 && n == d.sizes[0]) {
      const int64_t rows = std::min(d.sizes[1] - cur.idx[1], (end - i) / n);
      char* out = d.op[0].data + cur.row[0];
      for (int64_t r = 0; r < rows; ++r) {
        denseLoop(f, n, reinterpret_cast<Out*>(out + r * d.op[0].strides[1]),
                  reinterpret_cast<const In*>(d.op[I + 1].data + cur.row[I + 1] +
                                              r * d.op[I + 1].strides[1])...);
      }
      // The cursor on the last of them; the loop's nextRow steps past it.
      cur.idx[1] += rows - 1;
      for (int k = 0; k < N; ++k) cur.row[k] += (rows - 1) * d.op[k].strides[1];
      i += rows * n;
      continue;
    }
    for (int64_t j = 0; j < n; j += kSegment) {
      const int64_t m = std::min(kSegment, n - j);
      const int64_t at = cur.idx[0] + j;
      char* out = d.op[0].data + cur.row[0] + at * out_stride;
      Out* dst = out_dense ? reinterpret_cast<Out*>(out) : out_buf.data();
      denseLoop(f, m, dst,
                segmentInput<In>(d, I + 1, cur.row[I + 1] + at * d.op[I + 1].strides[0], m,
                                 std::get<I>(in_buf).data())...);
      if (!out_dense)
        for (int64_t q = 0; q < m; ++q) *reinterpret_cast<Out*>(out + q * out_stride) = dst[q];
    }
    i += n;
  }
}

// Rows shorter than this take the per-element path: a run's setup would cost more.
constexpr int64_t kMinSegmentRow = 16;

// An index-space functor that can walk a range faster than index by index (an odometer
// instead of a division per element) says so with `bool range(begin, end) const`.
template <class F, class = void>
struct HasRange : std::false_type {};
template <class F>
struct HasRange<F, std::void_t<decltype(std::declval<const F&>().range(int64_t(), int64_t()))>>
    : std::true_type {};

template <class F>
bool indexLoop(const F& f, int64_t begin, int64_t end) {
  if constexpr (HasRange<F>::value) {
    return f.range(begin, end);
  } else {
    for (int64_t i = begin; i < end; ++i)
      if (!f(i)) return false;
    return true;
  }
}

// An index-space functor heavy in floating-point math (the random transforms) declares
// `static constexpr bool kFmaMath = true` to run in the widest lanes (with FMA) the CPU has:
// every call is then inlined, so the math's explicit fma() calls are single instructions
// rather than calls into libm; fma rounds once either way, so the values are the same.
template <class F, class = void>
struct FmaMath : std::false_type {};
template <class F>
struct FmaMath<F, std::void_t<decltype(F::kFmaMath)>> : std::bool_constant<F::kFmaMath> {};

template <class F>
bool indexRange(const F& f, int64_t begin, int64_t end) {
  if constexpr (FmaMath<F>::value) return inWidestLanes([&] { return indexLoop(f, begin, end); });
  return indexLoop(f, begin, end);
}

// An index-space functor whose every index is a run of elements (a scan's or a compaction's
// chunk, a sort's tile, a column reduction's chunk) says how many with `int64_t
// elementsPerIndex() const`: forEach then hands a thread about kGrain elements' worth of indices
// at a time, not kGrain indices.
template <class F, class = void>
struct HasRuns : std::false_type {};
template <class F>
struct HasRuns<F, std::void_t<decltype(std::declval<const F&>().elementsPerIndex())>>
    : std::true_type {};

template <class F>
int64_t indexGrain(const F& f) {
  if constexpr (HasRuns<F>::value)
    return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, f.elementsPerIndex()));
  return kGrain;
}

// Accumulations run on one thread (serial forEach), so a plain read-modify-write is exact.
// Plain read-modify-writes: the host runs the accumulating kernels on one thread, in order
// (a serial forEach), so no atomics are needed and duplicates combine as CPU's do.
struct PlainAccumulate {
  template <class T>
  static void add(T* p, OpMath<T> v) {
    *p = castTo<T>(castTo<OpMath<T>>(*p) + v);
  }
  template <class T, class Combine>
  static void combine(T* p, OpMath<T> v, Combine f) {
    *p = castTo<T>(f(castTo<OpMath<T>>(*p), v));
  }
};

struct Executor {
  using Accumulate = PlainAccumulate;
  // Adjacent outputs per task of a column reduction (reduce.h): a dense inner loop.
  static constexpr int kColumnLanes = 64;
  // Column reductions merge their chunks' partials in the tasks that reduce them (reduce.h's
  // ColumnGroupOp): the merge passes, a launch per level over thousands of outputs' partials,
  // cost more than the chunks. A task takes 16^levels chunks: as many as leave the pool at
  // least 4 tasks a thread, or all of a group's when its groups alone do that or the whole
  // reduction is a few tasks' grain.
  static constexpr bool kColumnMergeInTask = true;
  static int columnMergeLevels(int64_t chunks, int64_t groups, int64_t elements, int64_t fan_in) {
    constexpr int kAll = 64;
    const int64_t want = 4 * rt::host::numThreads();
    if (chunks == 1 || groups >= want || elements <= 4 * kGrain) return kAll;
    int levels = 0;
    for (int64_t span = fan_in; span < chunks && groups * ((chunks + span - 1) / span) >= want;
         span *= fan_in)
      ++levels;
    return levels;
  }

  template <class Out, class... In, class F>
  static rt::Error run(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
    if (d.numel == 0) return rt::Error::Success;
    constexpr bool typed = !std::is_same_v<Out, AnyDType> && (!std::is_same_v<In, AnyDType> && ...);
    if constexpr (typed) {
      if (isContiguous(d)) {
        return launch(stream, d.numel, [d, f] {
          rt::host::parallelFor(0, d.numel, kGrain, [&](int64_t b, int64_t e) {
            denseRange<F, Out, In...>(f, d, b, e, std::index_sequence_for<In...>{});
          });
        });
      }
      if (d.ndim > 0 && d.sizes[0] >= kMinSegmentRow) {
        return launch(stream, d.numel, [d, f] {
          rt::host::parallelFor(0, d.numel, kGrain, [&](int64_t b, int64_t e) {
            inWidestLanes([&] {
              stridedSegments<F, Out, In...>(f, d, b, e, std::index_sequence_for<In...>{});
            });
          });
        });
      }
    }
    return launch(stream, d.numel, [d, f] {
      rt::host::parallelFor(0, d.numel, kGrain,
                            [&](int64_t b, int64_t e) { stridedRange<F, Out, In...>(f, d, b, e); });
    });
  }

  // f(row, begin, end) over the elements [begin, end) of a row of a [rows, width] space;
  // the host hands it whole rows, split over the pool.
  template <class F>
  static rt::Error forRows(int64_t rows, int64_t width, const F& f, rt::Stream stream) {
    if (rows == 0 || width == 0) return rt::Error::Success;
    return launch(stream, rows * width, [rows, width, f] {
      rt::host::parallelFor(0, rows, std::max<int64_t>(1, kGrain / width),
                            [&](int64_t b, int64_t e) {
                              inWidestLanes([&] {
                                for (int64_t r = b; r < e; ++r) f(r, 0, width);
                              });
                            });
    });
  }

  template <class F>
  static rt::Error forEach(int64_t n, bool serial, const F& f, rt::Stream stream) {
    int64_t elements = n;
    if constexpr (HasRuns<F>::value) elements = n * f.elementsPerIndex();
    return launch(stream, elements, [n, serial, f] {
      auto body = [&](int64_t b, int64_t e) {
        // The aten layer validates indices first; reaching this is a bug upstream, and it
        // becomes the device's sticky error instead of a wild write.
        if (!indexRange(f, b, e))
          throw std::out_of_range("accel: index out of bounds in an indexing kernel");
      };
      if (serial)
        body(0, n);
      else
        rt::host::parallelFor(0, n, indexGrain(f), body);
    });
  }
};

}  // namespace accel::kernels::host
