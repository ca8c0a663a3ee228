// The indexing family: gather/scatter-style indexed copies (gather, scatter, index_select,
// index_add, index, index_put, embedding backward), index bounds, nonzero, triu/tril,
// arange, and the histograms (histc, bincount: histogram.h). Its per-element bodies are shared by
// the host and CUDA builds. Each is a functor `bool operator()(int64_t i) const` (false: index i
// met an out-of-range index and was skipped). An executor runs it over [0, n):
//   Exec::forEach(n, serial, f, stream)   serial = duplicates accumulate into one place
// The indexed copies run one element per index, or a run of a row per index (forIndexed).
// Index bounds and nonzero (with its count) are chunked passes over the same index space, planned
// like a scan of one line (planCompact), their chunks' partials scanned by carry_scan.h.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/fill.h"
#include "kernels/histogram.h"
#include "kernels/carry_scan.h"
#include "kernels/reduce_math.h"

namespace accel::kernels {

// Index tensors of one advanced-indexing call (x[i0, i1, ...]); more is rejected by the aten
// layer before it gets here.
constexpr int kMaxIndexTensors = 8;

// An indexed copy over the iteration space `iter` (TensorIterator order, innermost first).
// iter.op[0] is the destination, iter.op[1] the source (absent for IndexMode::Fill). The
// indexed operand's indexed dimensions are restrided to 0 in `iter`; element i of it lives at
//   data + offset(i) + sum_k wrap(index_k[i]) * dim_stride[k]
// where wrap() adds dim_size[k] to a negative index. An index outside [-size, size) is never
// dereferenced (the aten layer validated it first; the kernel skips it or raises).
struct IndexDesc {
  ElementwiseDesc iter;
  int indexed_operand = 1;  // 0: the indices pick destination elements, 1: source elements
  int nindex = 0;
  Operand index[kMaxIndexTensors];  // Int64 or Int32, strides (bytes) over iter's dimensions
  int64_t dim_size[kMaxIndexTensors] = {};
  int64_t dim_stride[kMaxIndexTensors] = {};  // bytes, in the indexed operand
};

enum class IndexMode : int {
  Copy,  // dst = src
  Add,   // dst += alpha * src, duplicates accumulate (atomics on CUDA, one thread on host)
  Fill,  // dst = value
  Mul,   // dst *= src; Max, Min: dst = max(dst, src), min(dst, src), a NaN src wins (as CPU's
  Max,   // scatter_reduce and index_reduce). Duplicates combine like Add's (compare-and-swap
  Min,   // on CUDA, one thread in index order on host).
};

struct IndexTable {
  // The indexed copy. `scalar` is alpha for Add and the value for Fill. Source and
  // destination have the same dtype.
  rt::Error (*index)(const IndexDesc& d, IndexMode mode, Scalar scalar, rt::Stream stream);
  // The bytes of device workspace that index_bounds, nonzero_count and nonzero take for d
  // on the stream's device (their chunks' partials: planCompact).
  int64_t (*compact_workspace_bytes)(const ElementwiseDesc& d, rt::Stream stream);
  // minmax[0] = min, minmax[1] = max of the index operand d.op[0] (Int64 or Int32), written to
  // device memory; an empty index writes {INT64_MAX, INT64_MIN}.
  rt::Error (*index_bounds)(const ElementwiseDesc& d, int64_t* minmax, char* workspace,
                            rt::Stream stream);
  // count[0] = number of nonzero elements of d.op[0] (device memory). Leaves in `workspace`
  // the offsets that nonzero of the same d reads.
  rt::Error (*nonzero_count)(const ElementwiseDesc& d, int64_t* count, char* workspace,
                             rt::Stream stream);
  // Writes the coordinates of the nonzero elements of d.op[0] in row-major order, element k's
  // dimension j at out[k * row_stride + j * dim_stride] (int64 elements; CPU's functional
  // nonzero is column-major: row_stride 1, dim_stride count), with the workspace
  // nonzero_count(d) filled before it on the stream; elements from k = limit on are not
  // written (nonzero_static's rows, known without reading the count back). Here d's
  // dimensions are the tensor's, OUTERMOST first (not coalesced).
  rt::Error (*nonzero)(const ElementwiseDesc& d, int64_t* out, int64_t row_stride,
                       int64_t dim_stride, int64_t limit, const char* workspace, rt::Stream stream);
  // out = in where (col - row) >= diagonal (upper, triu) or <= diagonal (lower, tril), else 0.
  // d.op[0] out, d.op[1] in, same dtype; dimension 0 is the column, 1 the row (not coalesced).
  rt::Error (*triangle)(const ElementwiseDesc& d, int64_t diagonal, bool upper, rt::Stream stream);
  // out[i] = start + i * step, for i in iteration order (d.op[0] one-dimensional).
  rt::Error (*arange)(const ElementwiseDesc& d, Scalar start, Scalar step, rt::Stream stream);
  // out[b] += 1 for each element x of d.op[0] with lo <= x <= hi, where
  // b = (x - lo) * bins / (hi - lo) truncated, and x == hi counts in the last bin. The bin is
  // computed as CUDA does: in the input's opmath type for floats (lo and hi rounded to it),
  // exactly for integers. NaN counts nowhere. `out` holds `bins` contiguous elements of the
  // input's dtype, zeroed by the caller; lo < hi, both finite (checked by the caller).
  rt::Error (*histc)(const ElementwiseDesc& d, double lo, double hi, int64_t bins, char* out,
                     rt::Stream stream);
  // For each element x of d.op[0] (Int64, in [0, size): checked by the caller), out[x] += 1
  // (d.noperands == 1; out Int64) or out[x] += w (d.noperands == 2: d.op[1] the weights, any
  // dtype; out Float or Double, `out_dtype`). `out` holds `size` zeroed contiguous elements.
  rt::Error (*bincount)(const ElementwiseDesc& d, char* out, DType out_dtype, int64_t size,
                        rt::Stream stream);
  // Exec: the driver's executor, with the numbers of the compactions' plan (planCompact).
  template <class Exec>
  static IndexTable make();
};

const IndexTable& indexTable();  // the build of the driver in use

// Byte offsets of element i in the destination and the source, the indices applied.
ACCEL_HD inline bool indexedOffsets(const IndexDesc& d, int64_t linear, int64_t& dst,
                                    int64_t& src) {
  int64_t ioff[kMaxIndexTensors];
  for (int k = 0; k < d.nindex; ++k) ioff[k] = 0;
  dst = 0;
  src = 0;
  for (int dim = 0; dim < d.iter.ndim; ++dim) {
    const int64_t size = d.iter.sizes[dim];
    const int64_t c = dim + 1 < d.iter.ndim ? linear % size : linear;
    linear /= size;
    dst += c * d.iter.op[0].strides[dim];
    src += c * d.iter.op[1].strides[dim];
    for (int k = 0; k < d.nindex; ++k) ioff[k] += c * d.index[k].strides[dim];
  }
  int64_t extra = 0;
  for (int k = 0; k < d.nindex; ++k) {
    int64_t v = loadAs<int64_t>(d.index[k].data + ioff[k], d.index[k].dtype);
    if (v < 0) v += d.dim_size[k];
    if (v < 0 || v >= d.dim_size[k]) return false;
    extra += v * d.dim_stride[k];
  }
  (d.indexed_operand == 0 ? dst : src) += extra;
  return true;
}

// The per-element bodies of the indexed copies: `apply(dst, src)` on one destination element
// and its source (src is null for IndexMode::Fill).
template <class T>
struct IndexCopyOp {
  IndexDesc d;
  ACCEL_HD void apply(char* dst, const char* src) const {
    *reinterpret_cast<T*>(dst) = *reinterpret_cast<const T*>(src);
  }
};

template <class T>
struct IndexFillOp {
  IndexDesc d;
  T value;
  ACCEL_HD void apply(char* dst, const char*) const { *reinterpret_cast<T*>(dst) = value; }
};

// dst += alpha * src. `Accumulate` is the executor's read-modify-write (atomic on CUDA).
template <class T, class Accumulate>
struct IndexAddOp {
  IndexDesc d;
  OpMath<T> alpha;
  ACCEL_HD void apply(char* dst, const char* src) const {
    const OpMath<T> v = castTo<OpMath<T>>(*reinterpret_cast<const T*>(src));
    Accumulate::add(reinterpret_cast<T*>(dst), static_cast<OpMath<T>>(alpha * v));
  }
};

// The combines of IndexMode::Mul, Max and Min over OpMath<T>: `cur` is the destination's value.
struct MulCombine {
  template <class V>
  ACCEL_HD V operator()(V cur, V v) const {
    return static_cast<V>(cur * v);
  }
};
struct MaxCombine {
  template <class V>
  ACCEL_HD V operator()(V cur, V v) const {
    return isNan(v) ? v : (cur < v ? v : cur);
  }
};
struct MinCombine {
  template <class V>
  ACCEL_HD V operator()(V cur, V v) const {
    return isNan(v) ? v : (v < cur ? v : cur);
  }
};

// dst = Combine(dst, src), duplicates combining in turn.
template <class T, class Accumulate, class Combine>
struct IndexCombineOp {
  IndexDesc d;
  ACCEL_HD void apply(char* dst, const char* src) const {
    const OpMath<T> v = castTo<OpMath<T>>(*reinterpret_cast<const T*>(src));
    Accumulate::combine(reinterpret_cast<T*>(dst), v, Combine{});
  }
};

// Op over one element per index. The host walks a range of them with an odometer (range).
template <class Op>
struct IndexElementsOp {
  Op op;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t dst, src;
    if (!indexedOffsets(op.d, i, dst, src)) return false;
    op.apply(op.d.iter.op[0].data + dst,
             op.d.iter.noperands > 1 ? op.d.iter.op[1].data + src : nullptr);
    return true;
  }
  // Elements [begin, end); false at the first out-of-range index, as operator().
  bool range(int64_t begin, int64_t end) const {
    const IndexDesc& d = op.d;
    Odometer<2 + kMaxIndexTensors> at;  // the destination, the source, the index tensors
    at.ndim = d.iter.ndim;
    at.sizes = d.iter.sizes;
    at.n = 2 + d.nindex;
    at.strides[0] = d.iter.op[0].strides;
    at.strides[1] = d.iter.op[1].strides;  // zeros without a source (IndexMode::Fill)
    for (int k = 0; k < d.nindex; ++k) at.strides[2 + k] = d.index[k].strides;
    at.start(begin);
    char* dst_base = d.iter.op[0].data;
    const char* src_base = d.iter.noperands > 1 ? d.iter.op[1].data : nullptr;
    for (int64_t i = begin; i < end; ++i, at.next()) {
      int64_t extra = 0;
      for (int k = 0; k < d.nindex; ++k) {
        int64_t v = loadAs<int64_t>(d.index[k].data + at.off[2 + k], d.index[k].dtype);
        if (v < 0) v += d.dim_size[k];
        if (v < 0 || v >= d.dim_size[k]) return false;
        extra += v * d.dim_stride[k];
      }
      const int64_t dst = at.off[0] + (d.indexed_operand == 0 ? extra : 0);
      const int64_t src = at.off[1] + (d.indexed_operand == 1 ? extra : 0);
      op.apply(dst_base + dst, src_base ? src_base + src : nullptr);
    }
    return true;
  }
};

// Op over runs of the innermost dimension, when no index varies along it (index_select,
// embedding, x[idx] and their backward): each index is `chunk` elements of one row, whose
// offsets and indices are computed once (per element they cost divisions and a load each).
template <class Op, int64_t kItem>
struct IndexRowsOp {
  Op op;
  int64_t chunk;   // elements per index
  int64_t chunks;  // indices per row
  ACCEL_HD int64_t elementsPerIndex() const { return chunk; }
  ACCEL_HD bool operator()(int64_t i) const {
    const IndexDesc& d = op.d;
    const int64_t width = d.iter.sizes[0];
    const int64_t row = i / chunks;
    const int64_t begin = (i - row * chunks) * chunk;
    const int64_t n = (begin + chunk < width ? begin + chunk : width) - begin;
    int64_t dst, src;
    if (!indexedOffsets(d, row * width + begin, dst, src)) return false;
    char* out = d.iter.op[0].data + dst;
    const char* in = d.iter.noperands > 1 ? d.iter.op[1].data + src : nullptr;
    const int64_t out_step = d.iter.op[0].strides[0];
    const int64_t in_step = in ? d.iter.op[1].strides[0] : 0;
    if (out_step == kItem && (in == nullptr || in_step == kItem)) {
      for (int64_t j = 0; j < n; ++j) op.apply(out + j * kItem, in ? in + j * kItem : nullptr);
    } else {
      for (int64_t j = 0; j < n; ++j) op.apply(out + j * out_step, in ? in + j * in_step : nullptr);
    }
    return true;
  }
};

// Whether d's innermost dimension is a run no index varies along, long enough to pay.
ACCEL_HD inline bool indexRows(const IndexDesc& d) {
  constexpr int64_t kMinRow = 8;
  if (d.iter.ndim < 1 || d.iter.sizes[0] < kMinRow) return false;
  for (int k = 0; k < d.nindex; ++k)
    if (d.index[k].strides[0] != 0) return false;
  return true;
}

// Runs op over d (serial: on one thread in index order on the host, duplicates accumulating).
// Exec::kIndexRowChunk is the driver's longest run; 1 keeps a thread per element (CUDA's).
template <class Exec, class T, class Op>
rt::Error forIndexed(const Op& op, bool serial, rt::Stream stream) {
  const IndexDesc& d = op.d;
  if (Exec::kIndexRowChunk > 1 && indexRows(d)) {
    const int64_t width = d.iter.sizes[0];
    const int64_t chunk = width < Exec::kIndexRowChunk ? width : Exec::kIndexRowChunk;
    const int64_t chunks = (width + chunk - 1) / chunk;
    return Exec::forEach(d.iter.numel / width * chunks, serial,
                         IndexRowsOp<Op, sizeof(T)>{op, chunk, chunks}, stream);
  }
  return Exec::forEach(d.iter.numel, serial, IndexElementsOp<Op>{op}, stream);
}

template <class Exec>
rt::Error launchIndex(const IndexDesc& d, IndexMode mode, Scalar scalar, rt::Stream stream) {
  const int noperands = mode == IndexMode::Fill ? 1 : 2;
  if (d.iter.noperands != noperands || d.nindex < 0 || d.nindex > kMaxIndexTensors ||
      d.iter.ndim < 0 || d.iter.ndim > kMaxDims || d.iter.numel < 0 ||
      (d.indexed_operand != 0 && d.indexed_operand != 1) ||
      (mode == IndexMode::Fill && d.indexed_operand != 0))
    return rt::Error::InvalidValue;
  if (noperands == 2 && d.iter.op[0].dtype != d.iter.op[1].dtype) return rt::Error::InvalidValue;
  if (!isSupported(d.iter.op[0].dtype)) return rt::Error::InvalidValue;
  for (int k = 0; k < d.nindex; ++k)
    if (d.index[k].dtype != DType::Int64 && d.index[k].dtype != DType::Int32)
      return rt::Error::InvalidValue;
  if (d.iter.numel == 0) return rt::Error::Success;
  return dispatchDType(d.iter.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename Exec::Accumulate;
    switch (mode) {
      case IndexMode::Copy: return forIndexed<Exec, T>(IndexCopyOp<T>{d}, false, stream);
      case IndexMode::Fill:
        return forIndexed<Exec, T>(IndexFillOp<T>{d, scalarAs<T>(scalar)}, false, stream);
      case IndexMode::Add:
        return forIndexed<Exec, T>(IndexAddOp<T, Acc>{d, scalarAs<OpMath<T>>(scalar)}, true,
                                   stream);
      case IndexMode::Mul:
        return forIndexed<Exec, T>(IndexCombineOp<T, Acc, MulCombine>{d}, true, stream);
      case IndexMode::Max:
        return forIndexed<Exec, T>(IndexCombineOp<T, Acc, MaxCombine>{d}, true, stream);
      case IndexMode::Min:
        return forIndexed<Exec, T>(IndexCombineOp<T, Acc, MinCombine>{d}, true, stream);
    }
    return rt::Error::InvalidValue;
  });
}

// triu / tril: dimension 0 is the column, dimension 1 the row.
template <class T>
struct TriangleOp {
  ElementwiseDesc d;
  int64_t diagonal;
  bool upper;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t off[2];
    offsetsOf(d, i, off);
    const int64_t col = i % d.sizes[0];
    const int64_t row = (i / d.sizes[0]) % d.sizes[1];
    const bool keep = upper ? col - row >= diagonal : col - row <= diagonal;
    *reinterpret_cast<T*>(d.op[0].data + off[0]) =
        keep ? *reinterpret_cast<const T*>(d.op[1].data + off[1]) : T(0);
    return true;
  }
  // The host's walk: the odometer's first two coordinates are the column and the row.
  bool range(int64_t begin, int64_t end) const {
    Odometer<2> at;
    at.ndim = d.ndim;
    at.sizes = d.sizes;
    at.n = 2;
    at.strides[0] = d.op[0].strides;
    at.strides[1] = d.op[1].strides;
    at.start(begin);
    for (int64_t i = begin; i < end; ++i, at.next()) {
      const int64_t shift = at.coord[0] - at.coord[1];
      const bool keep = upper ? shift >= diagonal : shift <= diagonal;
      *reinterpret_cast<T*>(d.op[0].data + at.off[0]) =
          keep ? *reinterpret_cast<const T*>(d.op[1].data + at.off[1]) : T(0);
    }
    return true;
  }
};

template <class Exec>
rt::Error launchTriangle(const ElementwiseDesc& d, int64_t diagonal, bool upper,
                         rt::Stream stream) {
  if (rt::Error e = validate(d, 2); e != rt::Error::Success) return e;
  if (d.ndim < 2 || d.op[0].dtype != d.op[1].dtype) return rt::Error::InvalidValue;
  if (d.numel == 0) return rt::Error::Success;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Exec::forEach(d.numel, false, TriangleOp<T>{d, diagonal, upper}, stream);
  });
}

// arange: computed as start + i * step in the output's opmath type (double for float outputs,
// like ATen's CPU kernel, which accumulates nothing).
template <class T>
struct ArangeOp {
  ElementwiseDesc d;
  std::conditional_t<isFloating<T>, double, int64_t> start, step;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t off[1];
    offsetsOf(d, i, off);
    *reinterpret_cast<T*>(d.op[0].data + off[0]) = castTo<T>(start + step * i);
    return true;
  }
  // The host's walk, in vector lanes when the output is dense.
  bool range(int64_t begin, int64_t end) const {
    const int64_t stride = d.ndim > 0 ? d.op[0].strides[0] : 0;
    if (stride == static_cast<int64_t>(sizeof(T))) {
      T* out = reinterpret_cast<T*>(d.op[0].data);
      for (int64_t i = begin; i < end; ++i) out[i] = castTo<T>(start + step * i);
    } else {
      for (int64_t i = begin; i < end; ++i)
        *reinterpret_cast<T*>(d.op[0].data + i * stride) = castTo<T>(start + step * i);
    }
    return true;
  }
};

template <class Exec>
rt::Error launchArange(const ElementwiseDesc& d, Scalar start, Scalar step, rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  if (d.numel == 0) return rt::Error::Success;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<isFloating<T>, double, int64_t>;
    return Exec::forEach(d.numel, false, ArangeOp<T>{d, scalarAs<C>(start), scalarAs<C>(step)},
                         stream);
  });
}

// --- index bounds and nonzero: chunked passes, a scan's plan over one line --------------------

// Index bounds, nonzero and its count walk the elements in row-major order, chunk by chunk.
ACCEL_HD inline ScanPlan planCompact(int64_t numel, const ScanGeometry& g) {
  return planScan(1, numel, 1, g);
}

template <class Exec>
ScanPlan compactPlanOf(const ElementwiseDesc& d, rt::Stream stream) {
  return planCompact(d.numel, Exec::scanGeometry(stream));
}

// The chunks' partials, one state more than there are chunks: their exclusive scan leaves the
// total of every chunk in that last state.
template <class Exec>
CarryPlan compactCarryPlanOf(const ScanPlan& p, rt::Stream stream) {
  return planCarries(1, p.tasks + 1, Exec::scanGeometry(stream).fan_in);
}

// Calls f(element, coordinates) for the positions [begin, end) of an outermost-first
// descriptor's operand 0, in row-major order, stepping the coordinates (no division per
// element).
template <class F>
ACCEL_HD inline void walkRowMajor(const ElementwiseDesc& d, int64_t begin, int64_t end, F&& f) {
  int64_t coord[kMaxDims];
  int64_t off = 0, rest = begin;
  for (int dim = d.ndim - 1; dim >= 0; --dim) {
    coord[dim] = rest % d.sizes[dim];
    rest /= d.sizes[dim];
    off += coord[dim] * d.op[0].strides[dim];
  }
  for (int64_t i = begin; i < end; ++i) {
    f(d.op[0].data + off, coord);
    for (int dim = d.ndim - 1; dim >= 0; --dim) {
      off += d.op[0].strides[dim];
      if (++coord[dim] < d.sizes[dim]) break;
      off -= d.sizes[dim] * d.op[0].strides[dim];
      coord[dim] = 0;
    }
  }
}

// Chunk c's range [begin, end) of a compaction's plan.
ACCEL_HD inline int64_t chunkEnd(const ScanPlan& p, int64_t numel, int64_t c) {
  return (c + 1) * p.chunk < numel ? (c + 1) * p.chunk : numel;
}

// A compaction's chunk states: index bounds (lo, hi), or nonzero counts; each a combiner for
// scanCarries.
struct Bounds {
  int64_t lo, hi;
};
struct BoundsCombine {
  ACCEL_HD Bounds identity() const { return {INT64_MAX, INT64_MIN}; }
  ACCEL_HD Bounds combine(Bounds a, Bounds b) const {
    return {b.lo < a.lo ? b.lo : a.lo, b.hi > a.hi ? b.hi : a.hi};
  }
};
struct CountCombine {
  ACCEL_HD int64_t identity() const { return 0; }
  ACCEL_HD int64_t combine(int64_t a, int64_t b) const { return a + b; }
};

// What pass 1 of a compaction folds each chunk into.
struct BoundsFold {
  DType dtype;
  Bounds b = BoundsCombine{}.identity();
  ACCEL_HD void add(const char* e) {
    const int64_t v = loadAs<int64_t>(e, dtype);
    b = BoundsCombine{}.combine(b, {v, v});
  }
  ACCEL_HD Bounds state() const { return b; }
};

template <class T>
struct CountFold {
  int64_t k = 0;
  ACCEL_HD void add(const char* e) { k += castTo<bool>(*reinterpret_cast<const T*>(e)); }
  ACCEL_HD int64_t state() const { return k; }
};

// Pass 1 of a compaction: chunk c folded, in row-major order, into its state.
template <class Fold, class A>
struct ChunkFoldOp {
  ElementwiseDesc d;
  ScanPlan p;
  Fold start;
  A* states;
  int64_t elementsPerIndex() const { return p.chunk; }
  ACCEL_HD bool operator()(int64_t c) const {
    Fold f = start;
    walkRowMajor(d, c * p.chunk, chunkEnd(p, d.numel, c),
                 [&](const char* e, const int64_t*) { f.add(e); });
    states[c] = f.state();
    return true;
  }
};

// The last pass of index bounds and of the count: the total, from the state past the chunks.
template <class A>
struct CopyTotalOp {
  const A* total;
  A* out;
  ACCEL_HD bool operator()(int64_t) const {
    *out = *total;
    return true;
  }
};

// nonzero: chunk c writes its nonzero elements' coordinates from its offset on.
template <class T>
struct NonzeroChunkOp {
  ElementwiseDesc d;
  ScanPlan p;
  const int64_t* offsets;
  int64_t* out;
  int64_t row_stride, dim_stride, limit;
  int64_t elementsPerIndex() const { return p.chunk; }
  ACCEL_HD bool operator()(int64_t c) const {
    int64_t k = offsets[c];
    if (k >= limit) return true;
    int64_t* row = out + k * row_stride;
    walkRowMajor(d, c * p.chunk, chunkEnd(p, d.numel, c), [&](const char* e, const int64_t* at) {
      if (k >= limit || !castTo<bool>(*reinterpret_cast<const T*>(e))) return;
      for (int dim = 0; dim < d.ndim; ++dim) row[dim * dim_stride] = at[dim];
      row += row_stride;
      ++k;
    });
    return true;
  }
};

// The larger state (bounds) sizes the scratch of either compaction.
template <class Exec>
int64_t compactWorkspaceBytes(const ElementwiseDesc& d, rt::Stream stream) {
  return compactCarryPlanOf<Exec>(compactPlanOf<Exec>(d, stream), stream).states *
         int64_t(sizeof(Bounds));
}

// The chunk states (pass 1), their exclusive scan, and the total into `out`.
template <class Exec, class Combine, class Fold, class A>
rt::Error compactTotals(const ElementwiseDesc& d, Fold start, A* states, A* out,
                        rt::Stream stream) {
  const ScanPlan p = compactPlanOf<Exec>(d, stream);
  if (rt::Error e =
          Exec::forEach(p.tasks, false, ChunkFoldOp<Fold, A>{d, p, start, states}, stream);
      e != rt::Error::Success)
    return e;
  if (rt::Error e =
          scanCarries<Exec>(Combine{}, states, 1, 1, compactCarryPlanOf<Exec>(p, stream), stream);
      e != rt::Error::Success)
    return e;
  return Exec::forEach(1, false, CopyTotalOp<A>{states + p.tasks, out}, stream);
}

template <class Exec>
rt::Error launchIndexBounds(const ElementwiseDesc& d, int64_t* minmax, char* workspace,
                            rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  if ((d.op[0].dtype != DType::Int64 && d.op[0].dtype != DType::Int32) || minmax == nullptr ||
      workspace == nullptr)
    return rt::Error::InvalidValue;
  static_assert(sizeof(Bounds) == 2 * sizeof(int64_t), "minmax is two int64");
  return compactTotals<Exec, BoundsCombine>(d, BoundsFold{d.op[0].dtype},
                                            reinterpret_cast<Bounds*>(workspace),
                                            reinterpret_cast<Bounds*>(minmax), stream);
}

template <class Exec>
rt::Error launchNonzeroCount(const ElementwiseDesc& d, int64_t* count, char* workspace,
                             rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  if (count == nullptr || workspace == nullptr) return rt::Error::InvalidValue;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return compactTotals<Exec, CountCombine>(d, CountFold<T>{},
                                             reinterpret_cast<int64_t*>(workspace), count, stream);
  });
}

template <class Exec>
rt::Error launchNonzero(const ElementwiseDesc& d, int64_t* out, int64_t row_stride,
                        int64_t dim_stride, int64_t limit, const char* workspace,
                        rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  if (d.numel == 0) return rt::Error::Success;
  if (out == nullptr || workspace == nullptr) return rt::Error::InvalidValue;
  const ScanPlan p = compactPlanOf<Exec>(d, stream);
  const auto* offsets = reinterpret_cast<const int64_t*>(workspace);
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Exec::forEach(p.tasks, false,
                         NonzeroChunkOp<T>{d, p, offsets, out, row_stride, dim_stride, limit},
                         stream);
  });
}

template <class Exec>
IndexTable IndexTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(IndexTable::index)>(&launchIndex<Exec>),
          static_cast<decltype(IndexTable::compact_workspace_bytes)>(&compactWorkspaceBytes<Exec>),
          static_cast<decltype(IndexTable::index_bounds)>(&launchIndexBounds<Exec>),
          static_cast<decltype(IndexTable::nonzero_count)>(&launchNonzeroCount<Exec>),
          static_cast<decltype(IndexTable::nonzero)>(&launchNonzero<Exec>),
          static_cast<decltype(IndexTable::triangle)>(&launchTriangle<Exec>),
          static_cast<decltype(IndexTable::arange)>(&launchArange<Exec>),
          static_cast<decltype(IndexTable::histc)>(&launchHistc<Exec>),
          static_cast<decltype(IndexTable::bincount)>(&launchBincount<Exec>)};
}

}  // namespace accel::kernels
