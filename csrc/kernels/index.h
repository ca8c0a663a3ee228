// The indexing family's per-element bodies, shared by the host and CUDA builds. Each is a
// functor `bool operator()(int64_t i) const` (false: element i met an out-of-range index and
// was skipped). An executor runs it over [0, n):
//   Exec::forEach(n, serial, f, stream)   serial = duplicates accumulate into one place
// and supplies the reductions (minMax, countNonzero, nonzero), whose per-element reads are the
// helpers below.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/fill.h"
#include "kernels/index_abi.h"

namespace accel::kernels {

// Element i (TensorIterator order) of a one-operand problem, as int64.
ACCEL_HD inline int64_t indexAt(const ElementwiseDesc& d, int64_t i) {
  int64_t off[1];
  offsetsOf(d, i, off);
  return loadAs<int64_t>(d.op[0].data + off[0], d.op[0].dtype);
}

// Byte offsets of element i in the destination and the source, the indices applied.
ACCEL_HD inline bool indexedOffsets(const IndexDesc& d, int64_t linear, int64_t& dst,
                                    int64_t& src) {
  int64_t ioff[kMaxIndexTensors];
  for (int k = 0; k < d.nindex; ++k) ioff[k] = 0;
  dst = 0;
  src = 0;
  for (int dim = 0; dim < d.iter.ndim; ++dim) {
    const int64_t size = d.iter.sizes[dim];
    const int64_t c = linear % size;
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

template <class T>
struct IndexCopyOp {
  IndexDesc d;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t dst, src;
    if (!indexedOffsets(d, i, dst, src)) return false;
    *reinterpret_cast<T*>(d.iter.op[0].data + dst) =
        *reinterpret_cast<const T*>(d.iter.op[1].data + src);
    return true;
  }
};

template <class T>
struct IndexFillOp {
  IndexDesc d;
  T value;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t dst, src;
    if (!indexedOffsets(d, i, dst, src)) return false;
    *reinterpret_cast<T*>(d.iter.op[0].data + dst) = value;
    return true;
  }
};

// dst += alpha * src. `Accumulate` is the executor's read-modify-write (atomic on CUDA).
template <class T, class Accumulate>
struct IndexAddOp {
  IndexDesc d;
  OpMath<T> alpha;
  ACCEL_HD bool operator()(int64_t i) const {
    int64_t dst, src;
    if (!indexedOffsets(d, i, dst, src)) return false;
    const OpMath<T> v = castTo<OpMath<T>>(*reinterpret_cast<const T*>(d.iter.op[1].data + src));
    Accumulate::add(reinterpret_cast<T*>(d.iter.op[0].data + dst), static_cast<OpMath<T>>(alpha * v));
    return true;
  }
};

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
    switch (mode) {
      case IndexMode::Copy:
        return Exec::forEach(d.iter.numel, false, IndexCopyOp<T>{d}, stream);
      case IndexMode::Fill:
        return Exec::forEach(d.iter.numel, false, IndexFillOp<T>{d, scalarAs<T>(scalar)}, stream);
      case IndexMode::Add:
        return Exec::forEach(
            d.iter.numel, true,
            IndexAddOp<T, typename Exec::Accumulate>{d, scalarAs<OpMath<T>>(scalar)}, stream);
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

template <class Exec>
rt::Error launchIndexBounds(const ElementwiseDesc& d, int64_t* minmax, rt::Stream stream) {
  if (d.noperands != 1 || (d.op[0].dtype != DType::Int64 && d.op[0].dtype != DType::Int32) ||
      minmax == nullptr)
    return rt::Error::InvalidValue;
  return Exec::minMax(d, minmax, stream);
}

template <class Exec>
rt::Error launchNonzeroCount(const ElementwiseDesc& d, int64_t* count, rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Exec::template countNonzero<T>(d, count, stream);
  });
}

template <class Exec>
rt::Error launchNonzero(const ElementwiseDesc& d, int64_t* out, rt::Stream stream) {
  if (rt::Error e = validate(d, 1); e != rt::Error::Success) return e;
  if (d.numel == 0) return rt::Error::Success;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Exec::template nonzero<T>(d, out, stream);
  });
}

// Row-major coordinates of the element at linear (outermost-first) position `linear`.
ACCEL_HD inline void writeCoordinates(const ElementwiseDesc& d, int64_t linear, int64_t* row) {
  for (int dim = d.ndim - 1; dim >= 0; --dim) {
    row[dim] = linear % d.sizes[dim];
    linear /= d.sizes[dim];
  }
}

// Element at linear (outermost-first) position of an outermost-first descriptor.
template <class T>
ACCEL_HD inline bool nonzeroRowMajor(const ElementwiseDesc& d, int64_t linear) {
  int64_t off = 0;
  for (int dim = d.ndim - 1; dim >= 0; --dim) {
    off += (linear % d.sizes[dim]) * d.op[0].strides[dim];
    linear /= d.sizes[dim];
  }
  return castTo<bool>(*reinterpret_cast<const T*>(d.op[0].data + off));
}

}  // namespace accel::kernels
