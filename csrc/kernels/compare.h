// Comparisons and logical ops: out (bool) = a op b, with a and b in one dtype (the aten layer
// converts them to the comparison's common dtype). Computed in the inputs' own type, not in
// opmath, so integer comparisons stay exact.
#pragma once

#include "kernels/elementwise.h"
#include "kernels/fill.h"

namespace accel::kernels {

// out (bool) = a op b. Inputs in one dtype (the comparison's common dtype).
enum class CompareOp : int { Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor };

struct CompareTable {
  // out (bool) = a op b, a and b in one dtype.
  rt::Error (*compare)(CompareOp op, const ElementwiseDesc& d, rt::Stream stream);
  rt::Error (*compare_scalar)(CompareOp op, const ElementwiseDesc& d, Scalar rhs,
                              rt::Stream stream);
  template <class Exec>
  static CompareTable make();
};
const CompareTable& compareTable();  // the build of the driver in use

#define ACCEL_COMPARE_FUNCTOR(NAME, EXPR)                     \
  template <class T>                                          \
  struct NAME {                                               \
    using compute_t = T;                                      \
    ACCEL_HD bool operator()(T a, T b) const { return EXPR; } \
  };

ACCEL_COMPARE_FUNCTOR(EqOp, a == b)
ACCEL_COMPARE_FUNCTOR(NeOp, a != b)
ACCEL_COMPARE_FUNCTOR(LtOp, a < b)
ACCEL_COMPARE_FUNCTOR(LeOp, a <= b)
ACCEL_COMPARE_FUNCTOR(GtOp, a > b)
ACCEL_COMPARE_FUNCTOR(GeOp, a >= b)
ACCEL_COMPARE_FUNCTOR(LogicalAndOp, (a != T(0)) && (b != T(0)))
ACCEL_COMPARE_FUNCTOR(LogicalOrOp, (a != T(0)) || (b != T(0)))
ACCEL_COMPARE_FUNCTOR(LogicalXorOp, (a != T(0)) != (b != T(0)))
#undef ACCEL_COMPARE_FUNCTOR

// The element type as the comparison sees it: half and bfloat16 widen to float exactly.
template <class S>
using CompareT = OpMath<S>;

// Calls f(functor) for op, on inputs of storage type S.
template <class S, class F>
rt::Error withCompare(CompareOp op, const F& f) {
  using T = CompareT<S>;
  switch (op) {
    case CompareOp::Eq: return f(EqOp<T>{});
    case CompareOp::Ne: return f(NeOp<T>{});
    case CompareOp::Lt: return f(LtOp<T>{});
    case CompareOp::Le: return f(LeOp<T>{});
    case CompareOp::Gt: return f(GtOp<T>{});
    case CompareOp::Ge: return f(GeOp<T>{});
    case CompareOp::LogicalAnd: return f(LogicalAndOp<T>{});
    case CompareOp::LogicalOr: return f(LogicalOrOp<T>{});
    case CompareOp::LogicalXor: return f(LogicalXorOp<T>{});
  }
  return rt::Error::InvalidValue;
}

// Complex numbers are unordered: only equality and the logical ops (nonzero = true) apply.
template <class S, class F>
rt::Error withComplexCompare(CompareOp op, const F& f) {
  using T = CompareT<S>;
  switch (op) {
    case CompareOp::Eq: return f(EqOp<T>{});
    case CompareOp::Ne: return f(NeOp<T>{});
    case CompareOp::LogicalAnd: return f(LogicalAndOp<T>{});
    case CompareOp::LogicalOr: return f(LogicalOrOp<T>{});
    case CompareOp::LogicalXor: return f(LogicalXorOp<T>{});
    default: return rt::Error::NotSupported;
  }
}

template <class Exec>
rt::Error launchCompare(CompareOp op, const ElementwiseDesc& d, rt::Stream stream) {
  if (rt::Error e = validate(d, 3, /*complex_ok=*/true); e != rt::Error::Success) return e;
  if (d.op[0].dtype != DType::Bool || d.op[1].dtype != d.op[2].dtype)
    return rt::Error::InvalidValue;
  auto run = [&](auto tag) {
    using S = typename decltype(tag)::type;
    return [&](auto f) { return Exec::template run<bool, S, S>(d, f, stream); };
  };
  if (isComplex(d.op[1].dtype)) {
    return dispatchComplex(d.op[1].dtype, [&](auto tag) {
      return withComplexCompare<typename decltype(tag)::type>(op, run(tag));
    });
  }
  return dispatchDType(d.op[1].dtype, [&](auto tag) {
    return withCompare<typename decltype(tag)::type>(op, run(tag));
  });
}

template <class Exec>
rt::Error launchCompareScalar(CompareOp op, const ElementwiseDesc& d, Scalar rhs,
                              rt::Stream stream) {
  if (rt::Error e = validate(d, 2, /*complex_ok=*/true); e != rt::Error::Success) return e;
  if (d.op[0].dtype != DType::Bool) return rt::Error::InvalidValue;
  auto run = [&](auto tag) {
    using S = typename decltype(tag)::type;
    using T = CompareT<S>;
    return [&](auto f) {
      using Op = decltype(f);
      return Exec::template run<bool, S>(d, WithScalar<Op, bool>{f, scalarAs<T>(rhs)}, stream);
    };
  };
  if (isComplex(d.op[1].dtype)) {
    return dispatchComplex(d.op[1].dtype, [&](auto tag) {
      return withComplexCompare<typename decltype(tag)::type>(op, run(tag));
    });
  }
  return dispatchDType(d.op[1].dtype, [&](auto tag) {
    return withCompare<typename decltype(tag)::type>(op, run(tag));
  });
}

template <class Exec>
CompareTable CompareTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(CompareTable::compare)>(&launchCompare<Exec>),
          static_cast<decltype(CompareTable::compare_scalar)>(&launchCompareScalar<Exec>)};
}

}  // namespace accel::kernels
