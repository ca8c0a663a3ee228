// The elementwise machinery shared by the host and CUDA builds: per-operand byte offsets from
// a linear index, the contiguity test, and the per-element body (load each input as its own
// dtype, cast to the functor's compute type, call it, cast to the output dtype, store).
//
// A functor F declares `using compute_t = ...` and `ACCEL_HD compute_t operator()(compute_t...)
// const` with one argument per input operand. Its launch is typed by the storage type of each
// operand: a C++ scalar type, or AnyDType when the operand's dtype is read at run time.
#pragma once

#include <cstdint>
#include <utility>

#include "kernels/dtype.h"

namespace accel::kernels {

// Storage "type" of an operand whose dtype is only known at run time (per-element switch).
struct AnyDType {};

template <class S>
struct Access {
  template <class T>
  ACCEL_HD static T load(const char* p, DType) {
    return castTo<T>(*reinterpret_cast<const S*>(p));
  }
  template <class T>
  ACCEL_HD static void store(char* p, DType, T v) {
    *reinterpret_cast<S*>(p) = castTo<S>(v);
  }
};

template <>
struct Access<AnyDType> {
  template <class T>
  ACCEL_HD static T load(const char* p, DType t) {
    return loadAs<T>(p, t);
  }
  template <class T>
  ACCEL_HD static void store(char* p, DType t, T v) {
    storeAs<T>(p, t, v);
  }
};

// Host side, once per launch: whether every operand is dense in its own dtype, in the
// iteration order (size-1 dimensions may have any stride). Then element i of operand k lives
// at data + i * elementSize, and the typed fast path applies.
inline bool isContiguous(const ElementwiseDesc& d) {
  for (int k = 0; k < d.noperands; ++k) {
    int64_t expected = elementSize(d.op[k].dtype);
    for (int dim = 0; dim < d.ndim; ++dim) {
      if (d.sizes[dim] == 1) continue;
      if (d.op[k].strides[dim] != expected) return false;
      expected *= d.sizes[dim];
    }
  }
  return true;
}

// Byte offset of element `linear` in each of the N operands (dimension 0 varies fastest).
template <int N>
ACCEL_HD inline void offsetsOf(const ElementwiseDesc& d, int64_t linear, int64_t (&off)[N]) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int dim = 0; dim < d.ndim; ++dim) {
    const int64_t size = d.sizes[dim];
    const int64_t idx = dim + 1 < d.ndim ? linear % size : linear;  // the last needs no division
    linear /= size;
    for (int k = 0; k < N; ++k) off[k] += idx * d.op[k].strides[dim];
  }
}

// Element by element in linear order, the byte offsets of n (at most N) stride sets
// (dimension 0 fastest): the coordinates advance with a carry, so a step costs no division
// (offsetsOf costs one per dimension, the bulk of a cheap element's time on the host).
template <int N>
struct Odometer {
  int ndim = 0;
  const int64_t* sizes = nullptr;
  int n = 0;
  const int64_t* strides[N] = {};
  int64_t coord[kMaxDims] = {};
  int64_t off[N] = {};

  ACCEL_HD void start(int64_t linear) {
    for (int k = 0; k < n; ++k) off[k] = 0;
    for (int dim = 0; dim < ndim; ++dim) {
      coord[dim] = dim + 1 < ndim ? linear % sizes[dim] : linear;
      linear /= sizes[dim];
      for (int k = 0; k < n; ++k) off[k] += coord[dim] * strides[k][dim];
    }
  }
  ACCEL_HD void next() {
    for (int dim = 0; dim < ndim; ++dim) {
      for (int k = 0; k < n; ++k) off[k] += strides[k][dim];
      if (++coord[dim] < sizes[dim]) return;
      for (int k = 0; k < n; ++k) off[k] -= coord[dim] * strides[k][dim];
      coord[dim] = 0;
    }
  }
};

// Element i of dense, typed operands. The pointers may alias exactly (in-place ops), never
// partially (PyTorch rejects partial overlap before it gets here).
template <class F, class Out, class... In>
ACCEL_HD inline void contiguousAt(const F& f, int64_t i, Out* out, const In*... in) {
  using T = typename F::compute_t;
  out[i] = castTo<Out>(f(castTo<T>(in[i])...));
}

// The element at byte offsets off[] (operand 0 is the output).
template <class F, class Out, class... In, int N, size_t... I>
ACCEL_HD inline void stridedAtImpl(const F& f, const ElementwiseDesc& d, const int64_t (&off)[N],
                                   std::index_sequence<I...>) {
  using T = typename F::compute_t;
  Access<Out>::store(
      d.op[0].data + off[0], d.op[0].dtype,
      f(Access<In>::template load<T>(d.op[I + 1].data + off[I + 1], d.op[I + 1].dtype)...));
}

template <class F, class Out, class... In, int N>
ACCEL_HD inline void stridedAt(const F& f, const ElementwiseDesc& d, const int64_t (&off)[N]) {
  static_assert(N == 1 + sizeof...(In), "one offset per operand");
  stridedAtImpl<F, Out, In...>(f, d, off, std::index_sequence_for<In...>{});
}

// Typed data pointer of operand k, for the dense fast path.
template <class S>
inline S* typedData(const ElementwiseDesc& d, int k) {
  return reinterpret_cast<S*>(d.op[k].data);
}

// a op rhs, with rhs a scalar passed by value (a Python number never visits the device); R is
// the result type (the compute type, or bool for comparisons).
template <class Op, class R = typename Op::compute_t>
struct WithScalar {
  using compute_t = typename Op::compute_t;
  Op op;
  compute_t rhs;
  ACCEL_HD R operator()(compute_t a) const { return op(a, rhs); }
};

// Host-side checks every launch makes before dispatching. Complex operands only reach the
// launchers that pass complex_ok (and then dispatch them with dispatchComplex).
inline rt::Error validate(const ElementwiseDesc& d, int noperands, bool complex_ok = false) {
  if (d.noperands != noperands || d.ndim < 0 || d.ndim > kMaxDims || d.numel < 0)
    return rt::Error::InvalidValue;
  for (int k = 0; k < d.noperands; ++k) {
    const DType t = d.op[k].dtype;
    if (!(isSupported(t) || (complex_ok && isComplex(t))) ||
        (d.numel > 0 && d.op[k].data == nullptr))
      return rt::Error::InvalidValue;
  }
  return rt::Error::Success;
}

// Whether every operand has the output's dtype.
inline bool allSameDType(const ElementwiseDesc& d) {
  for (int k = 1; k < d.noperands; ++k)
    if (d.op[k].dtype != d.op[0].dtype) return false;
  return true;
}

// Whether any operand is complex (such a launch goes to the family's complex path).
inline bool anyComplex(const ElementwiseDesc& d) {
  for (int k = 0; k < d.noperands; ++k)
    if (isComplex(d.op[k].dtype)) return true;
  return false;
}

}  // namespace accel::kernels
