// Unary elementwise ops: out = f(in). One functor per op, picked once per launch, so the dense
// loop of each is a plain typed loop the compiler can vectorize. The input is already in the
// compute dtype (the aten layer converts it), so only out == in (or a bool out for the
// predicates) is instantiated. Computed in the opmath type (float for half and bfloat16).
#pragma once

#include <cmath>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/fill.h"
#include "kernels/vector_math.h"

namespace accel::kernels {

enum class UnaryOp : int {
  Neg,
  Abs,
  Sign,
  Relu,
  BitwiseNot,
  LogicalNot,
  IsNan,
  IsFinite,
  Exp,
  Exp2,
  Expm1,
  Log,
  Log1p,
  Log2,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Erf,
  Floor,
  Ceil,
  Round,
  Trunc,
  Silu,
  Gelu,
  GeluTanh,
  Clamp,     // a = min (if has_a), b = max (if has_b)
  NanToNum,  // a = nan, b = posinf, c = neginf replacements
  Softplus,  // a = beta, b = threshold
};

struct UnaryParams {
  Scalar a, b, c;
  bool has_a = false, has_b = false;
};

struct UnaryTable {
  // out = op(in): operand 0 the output, operand 1 the input (same dtype; bool out for the
  // predicates LogicalNot, IsNan, IsFinite).
  rt::Error (*unary)(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p, rt::Stream stream);
  template <class Exec>
  static UnaryTable make();
};
const UnaryTable& unaryTable();  // the build of the driver in use

// sqrt(2/pi) and 1/sqrt(2), as ATen's gelu uses them.
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kSqrtHalf = 0.7071067811865476;

#define ACCEL_UNARY_FUNCTOR(NAME, EXPR)               \
  template <class T>                                  \
  struct NAME {                                       \
    using compute_t = T;                              \
    ACCEL_HD T operator()(T x) const { return EXPR; } \
  };

// Any dtype.
ACCEL_UNARY_FUNCTOR(NegFn, static_cast<T>(-x))
template <class T>
struct AbsFn {
  using compute_t = T;
  ACCEL_HD T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return x < T(0) ? static_cast<T>(-x) : x;
  }
};
template <class T>
struct SignFn {
  using compute_t = T;
  ACCEL_HD T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return static_cast<T>(x != T(0));
    else
      return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
ACCEL_UNARY_FUNCTOR(ReluFn, x > T(0) || x != x ? x : T(0))
// Integers and bool (for bool the aten layer asks for LogicalNot instead).
ACCEL_UNARY_FUNCTOR(BitwiseNotFn, static_cast<T>(~x))
// Floating only.
ACCEL_UNARY_FUNCTOR(ExpFn, vexp(x))
ACCEL_UNARY_FUNCTOR(Exp2Fn, std::exp2(x))
ACCEL_UNARY_FUNCTOR(Expm1Fn, std::expm1(x))
ACCEL_UNARY_FUNCTOR(LogFn, std::log(x))
ACCEL_UNARY_FUNCTOR(Log1pFn, std::log1p(x))
ACCEL_UNARY_FUNCTOR(Log2Fn, std::log2(x))
ACCEL_UNARY_FUNCTOR(SqrtFn, std::sqrt(x))
ACCEL_UNARY_FUNCTOR(RsqrtFn, T(1) / std::sqrt(x))
ACCEL_UNARY_FUNCTOR(ReciprocalFn, T(1) / x)
ACCEL_UNARY_FUNCTOR(SinFn, std::sin(x))
ACCEL_UNARY_FUNCTOR(CosFn, std::cos(x))
ACCEL_UNARY_FUNCTOR(TanhFn, vtanh(x))
ACCEL_UNARY_FUNCTOR(SigmoidFn, T(1) / (T(1) + vexp(-x)))
ACCEL_UNARY_FUNCTOR(ErfFn, verf(x))
ACCEL_UNARY_FUNCTOR(FloorFn, std::floor(x))
ACCEL_UNARY_FUNCTOR(CeilFn, std::ceil(x))
ACCEL_UNARY_FUNCTOR(RoundFn, std::nearbyint(x))  // half to even, like torch.round
ACCEL_UNARY_FUNCTOR(TruncFn, std::trunc(x))
ACCEL_UNARY_FUNCTOR(SiluFn, x / (T(1) + vexp(-x)))
ACCEL_UNARY_FUNCTOR(GeluFn, T(0.5) * x * (T(1) + verf(x * T(kSqrtHalf))))
ACCEL_UNARY_FUNCTOR(GeluTanhFn,
                    T(0.5) * x * (T(1) + vtanh(T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x))))
// Predicates: bool out, computed in the input's type.
ACCEL_UNARY_FUNCTOR(LogicalNotFn, !(x != T(0)))
ACCEL_UNARY_FUNCTOR(IsNanFn, x != x)
ACCEL_UNARY_FUNCTOR(IsFiniteFn, x == x && x - x == T(0))
#undef ACCEL_UNARY_FUNCTOR

// min(max(x, lo), hi) with NaN kept, like ATen's clamp; a missing bound is +-infinity (or the
// integer extreme), filled in by the launcher.
template <class T>
struct ClampFn {
  using compute_t = T;
  T lo, hi;
  ACCEL_HD T operator()(T x) const {
    if (x != x) return x;
    return x < lo ? lo : (x > hi ? hi : x);
  }
};

template <class T>
struct NanToNumFn {
  using compute_t = T;
  T nan, posinf, neginf;
  ACCEL_HD T operator()(T x) const {
    if (x != x) return nan;
    if (x - x == T(0)) return x;
    return x > T(0) ? posinf : neginf;
  }
};

// softplus: log1p(exp(beta x)) / beta, linear above the threshold.
template <class T>
struct SoftplusFn {
  using compute_t = T;
  T beta, threshold;
  ACCEL_HD T operator()(T x) const {
    return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
  }
};

// Same-dtype run (the typed dense fast path); the predicates' launcher passes Out = bool.
template <class Exec, class Out, class In, class F>
rt::Error runUnary(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
  return Exec::template run<Out, In>(d, f, stream);
}

template <class T>
constexpr T lowest() {
  if constexpr (isFloating<T>)
    return -INFINITY;
  else
    return std::numeric_limits<T>::lowest();
}
template <class T>
constexpr T highest() {
  if constexpr (isFloating<T>)
    return INFINITY;
  else
    return std::numeric_limits<T>::max();
}

template <class Exec>
rt::Error launchUnary(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p,
                      rt::Stream stream) {
  if (rt::Error e = validate(d, 2); e != rt::Error::Success) return e;
  const bool predicate =
      op == UnaryOp::LogicalNot || op == UnaryOp::IsNan || op == UnaryOp::IsFinite;
  if (predicate ? d.op[0].dtype != DType::Bool : d.op[0].dtype != d.op[1].dtype)
    return rt::Error::InvalidValue;
  return dispatchDType(d.op[1].dtype, [&](auto tag) -> rt::Error {
    using S = typename decltype(tag)::type;
    using T = OpMath<S>;
#define ACCEL_RUN(FN) return runUnary<Exec, S, S>(d, FN<T>{}, stream)
#define ACCEL_RUN_BOOL(FN) return runUnary<Exec, bool, S>(d, FN<T>{}, stream)
    if constexpr (std::is_same_v<S, bool>) {
      // bool: only what PyTorch defines on bool reaches here.
      switch (op) {
        case UnaryOp::LogicalNot:
        case UnaryOp::BitwiseNot: ACCEL_RUN_BOOL(LogicalNotFn);
        case UnaryOp::Abs:
        case UnaryOp::Relu:
        case UnaryOp::Sign: return runUnary<Exec, S, S>(d, ClampFn<S>{false, true}, stream);
        case UnaryOp::IsNan: ACCEL_RUN_BOOL(IsNanFn);
        case UnaryOp::IsFinite: ACCEL_RUN_BOOL(IsFiniteFn);
        default: return rt::Error::NotSupported;
      }
    } else {
      switch (op) {
        case UnaryOp::Neg: ACCEL_RUN(NegFn);
        case UnaryOp::Abs: ACCEL_RUN(AbsFn);
        case UnaryOp::Sign: ACCEL_RUN(SignFn);
        case UnaryOp::Relu: ACCEL_RUN(ReluFn);
        case UnaryOp::LogicalNot: ACCEL_RUN_BOOL(LogicalNotFn);
        case UnaryOp::IsNan: ACCEL_RUN_BOOL(IsNanFn);
        case UnaryOp::IsFinite: ACCEL_RUN_BOOL(IsFiniteFn);
        case UnaryOp::Clamp: {
          const T lo = p.has_a ? scalarAs<T>(p.a) : lowest<T>();
          const T hi = p.has_b ? scalarAs<T>(p.b) : highest<T>();
          return runUnary<Exec, S, S>(d, ClampFn<T>{lo, hi}, stream);
        }
        default: break;
      }
      if constexpr (!isFloating<S>) {
        if (op == UnaryOp::BitwiseNot) ACCEL_RUN(BitwiseNotFn);
        return rt::Error::NotSupported;
      } else {
        switch (op) {
          case UnaryOp::Exp: ACCEL_RUN(ExpFn);
          case UnaryOp::Exp2: ACCEL_RUN(Exp2Fn);
          case UnaryOp::Expm1: ACCEL_RUN(Expm1Fn);
          case UnaryOp::Log: ACCEL_RUN(LogFn);
          case UnaryOp::Log1p: ACCEL_RUN(Log1pFn);
          case UnaryOp::Log2: ACCEL_RUN(Log2Fn);
          case UnaryOp::Sqrt: ACCEL_RUN(SqrtFn);
          case UnaryOp::Rsqrt: ACCEL_RUN(RsqrtFn);
          case UnaryOp::Reciprocal: ACCEL_RUN(ReciprocalFn);
          case UnaryOp::Sin: ACCEL_RUN(SinFn);
          case UnaryOp::Cos: ACCEL_RUN(CosFn);
          case UnaryOp::Tanh: ACCEL_RUN(TanhFn);
          case UnaryOp::Sigmoid: ACCEL_RUN(SigmoidFn);
          case UnaryOp::Erf: ACCEL_RUN(ErfFn);
          case UnaryOp::Floor: ACCEL_RUN(FloorFn);
          case UnaryOp::Ceil: ACCEL_RUN(CeilFn);
          case UnaryOp::Round: ACCEL_RUN(RoundFn);
          case UnaryOp::Trunc: ACCEL_RUN(TruncFn);
          case UnaryOp::Silu: ACCEL_RUN(SiluFn);
          case UnaryOp::Gelu: ACCEL_RUN(GeluFn);
          case UnaryOp::GeluTanh: ACCEL_RUN(GeluTanhFn);
          case UnaryOp::NanToNum:
            return runUnary<Exec, S, S>(
                d, NanToNumFn<T>{scalarAs<T>(p.a), scalarAs<T>(p.b), scalarAs<T>(p.c)}, stream);
          case UnaryOp::Softplus:
            return runUnary<Exec, S, S>(d, SoftplusFn<T>{scalarAs<T>(p.a), scalarAs<T>(p.b)},
                                        stream);
          default: return rt::Error::NotSupported;
        }
      }
    }
#undef ACCEL_RUN
#undef ACCEL_RUN_BOOL
  });
}

template <class Exec>
UnaryTable UnaryTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(UnaryTable::unary)>(&launchUnary<Exec>)};
}

}  // namespace accel::kernels
