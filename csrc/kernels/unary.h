// Unary elementwise ops: out = f(in). One functor per op, picked once per launch, so the dense
// loop of each is a plain typed loop the compiler can vectorize. The input is already in the
// compute dtype (the aten layer converts it), so only out == in (or a bool out for the
// predicates) is instantiated. Computed in the opmath type (float for half and bfloat16).
#pragma once

#include <cmath>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/fill.h"
#include "kernels/special_math.h"
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
  Sinh,
  Cosh,
  Tan,
  Log10,
  Sigmoid,
  Erf,
  Floor,
  Ceil,
  Round,
  Trunc,
  Silu,
  Gelu,
  GeluTanh,
  // Floating only, from here to Logit.
  Acos,
  Asin,
  Atan,
  Acosh,
  Asinh,
  Atanh,
  Erfc,
  Erfinv,
  Lgamma,
  Digamma,
  Polygamma,  // a = n
  I0,
  I0e,
  I1,
  I1e,
  BesselJ0,
  BesselJ1,
  BesselY0,
  BesselY1,
  SphericalBesselJ0,
  Erfcx,
  LogNdtr,
  Entr,
  Sinc,
  Frac,
  RoundDecimals,  // a = decimals
  Logit,          // a = eps (if has_a)
  Signbit,        // a predicate, any real dtype
  Clamp,          // a = min (if has_a), b = max (if has_b)
  NanToNum,       // a = nan, b = posinf, c = neginf replacements
  Softplus,       // a = beta, b = threshold
  // Conj and Sgn: complex inputs only (complexUnaryOp); Angle: real ones too. Abs and Angle of
  // a complex input write its real dtype.
  Conj,
  Angle,
  Sgn,
};

struct UnaryParams {
  Scalar a, b, c;
  bool has_a = false, has_b = false;
};

struct UnaryTable {
  // out = op(in): operand 0 the output, operand 1 the input (same dtype; bool out for the
  // predicates LogicalNot, IsNan, IsFinite; the real dtype for Abs and Angle of a complex).
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
// sin and cos: for float (and half / bfloat16, computed in float) vsincos where trigFast, the
// library beyond. fast / isFast let the host executor run a whole run through the vectorizing
// path when every element takes it (executor.h: HasFastPath).
template <class T, bool Cos>
struct SinCosFn {
  using compute_t = T;
  ACCEL_HD T library(T x) const { return Cos ? std::cos(x) : std::sin(x); }
  ACCEL_HD bool isFast(T x) const {
    if constexpr (std::is_same_v<T, float>) return trigFast(x);
    return false;
  }
  ACCEL_HD T fast(T x) const {
    if constexpr (std::is_same_v<T, float>) return vsincos<Cos>(x);
    return library(x);
  }
  ACCEL_HD T operator()(T x) const { return isFast(x) ? fast(x) : library(x); }
};
template <class T>
using SinFn = SinCosFn<T, false>;
template <class T>
using CosFn = SinCosFn<T, true>;
ACCEL_UNARY_FUNCTOR(TanhFn, vtanh(x))
ACCEL_UNARY_FUNCTOR(SinhFn, std::sinh(x))
ACCEL_UNARY_FUNCTOR(CoshFn, std::cosh(x))
ACCEL_UNARY_FUNCTOR(TanFn, std::tan(x))
ACCEL_UNARY_FUNCTOR(Log10Fn, std::log10(x))
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
ACCEL_UNARY_FUNCTOR(AcosFn, std::acos(x))
ACCEL_UNARY_FUNCTOR(AsinFn, std::asin(x))
ACCEL_UNARY_FUNCTOR(AtanFn, std::atan(x))
ACCEL_UNARY_FUNCTOR(AcoshFn, std::acosh(x))
ACCEL_UNARY_FUNCTOR(AsinhFn, std::asinh(x))
ACCEL_UNARY_FUNCTOR(AtanhFn, std::atanh(x))
ACCEL_UNARY_FUNCTOR(ErfcFn, std::erfc(x))
ACCEL_UNARY_FUNCTOR(LgammaFn, std::lgamma(x))
ACCEL_UNARY_FUNCTOR(FracFn, x - std::trunc(x))
// angle of a real number: pi below 0, else 0 (NaN kept).
ACCEL_UNARY_FUNCTOR(AngleFn, x != x ? x : (x < T(0) ? T(kPi) : T(0)))
// sin(pi x) / (pi x), 1 at 0, in the compute type as ATen.
ACCEL_UNARY_FUNCTOR(SincFn, x == T(0) ? T(1) : std::sin(T(kPi) * x) / (T(kPi) * x))
// -x log x: 0 at 0, -inf below.
ACCEL_UNARY_FUNCTOR(EntrFn,
                    x != x ? x : (x > T(0) ? -x * std::log(x) : (x == T(0) ? T(0) : -T(INFINITY))))
// special_math.h's functions, in double.
ACCEL_UNARY_FUNCTOR(ErfinvFn, static_cast<T>(erfinv(static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(DigammaFn, static_cast<T>(digamma(static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(I0Fn, static_cast<T>(besselI(0, static_cast<double>(x), false)))
ACCEL_UNARY_FUNCTOR(I0eFn, static_cast<T>(besselI(0, static_cast<double>(x), true)))
ACCEL_UNARY_FUNCTOR(I1Fn, static_cast<T>(besselI(1, static_cast<double>(x), false)))
ACCEL_UNARY_FUNCTOR(I1eFn, static_cast<T>(besselI(1, static_cast<double>(x), true)))
ACCEL_UNARY_FUNCTOR(BesselJ0Fn, static_cast<T>(besselJ(0, static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(BesselJ1Fn, static_cast<T>(besselJ(1, static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(BesselY0Fn, static_cast<T>(besselY(0, static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(BesselY1Fn, static_cast<T>(besselY(1, static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(SphericalBesselJ0Fn, static_cast<T>(sphericalBesselJ0(static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(ErfcxFn, static_cast<T>(erfcx(static_cast<double>(x))))
ACCEL_UNARY_FUNCTOR(LogNdtrFn, static_cast<T>(logNdtr(static_cast<double>(x))))
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
struct PolygammaFn {
  using compute_t = T;
  int64_t n;
  ACCEL_HD T operator()(T x) const { return static_cast<T>(polygamma(n, static_cast<double>(x))); }
};

// Sign bit: negative zero and NaNs with the bit set count; unsigned integers never.
template <class T>
struct SignbitFn {
  using compute_t = T;
  ACCEL_HD bool operator()(T x) const {
    if constexpr (isFloating<T>)
      return std::copysign(T(1), x) < T(0);  // (std::signbit's vector form crashes GCC 12)
    else if constexpr (std::is_unsigned_v<T>)
      return false;
    else
      return x < T(0);
  }
};

// round(x, decimals) by ATen's formula, in the compute type: x * 10^d rounded, then divided
// back (x / 10^-d rounded, then multiplied back, for d < 0).
template <class T>
struct RoundDecimalsFn {
  using compute_t = T;
  T ten_pow;
  bool negative;
  ACCEL_HD T operator()(T x) const {
    return negative ? std::nearbyint(x / ten_pow) * ten_pow : std::nearbyint(x * ten_pow) / ten_pow;
  }
};

// log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0.
template <class T>
struct LogitFn {
  using compute_t = T;
  T lo, hi;
  bool clamp;
  ACCEL_HD T operator()(T x) const {
    if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
    return x == T(1) ? T(INFINITY) : std::log(x / (T(1) - x));
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

// Beyond complex.h's functions, those only these ops use.
// z scaled by a real factor, componentwise (a complex multiply by (r, 0) would make 0 * inf nan).
template <class R>
ACCEL_HD inline Complex<R> cscale(Complex<R> z, R r) {
  return {z.re * r, z.im * r};
}
template <class R>
ACCEL_HD inline Complex<R> csinh(Complex<R> z) {
  return {std::sinh(z.re) * std::cos(z.im), std::cosh(z.re) * std::sin(z.im)};
}
template <class R>
ACCEL_HD inline Complex<R> ccosh(Complex<R> z) {
  return {std::cosh(z.re) * std::cos(z.im), std::sinh(z.re) * std::sin(z.im)};
}
// tan z = -i tanh(iz).
template <class R>
ACCEL_HD inline Complex<R> ctan(Complex<R> z) {
  const Complex<R> t = ctanh(Complex<R>(-z.im, z.re));
  return {t.im, -t.re};
}

// The complex unary ops, as functors over T = Complex<R> (R the result for Abs and Angle).
#define ACCEL_COMPLEX_UNARY(NAME, RESULT, EXPR)            \
  template <class T>                                       \
  struct NAME {                                            \
    using compute_t = T;                                   \
    using R = RealOfT<T>;                                  \
    ACCEL_HD RESULT operator()(T z) const { return EXPR; } \
  };
ACCEL_COMPLEX_UNARY(ComplexAbsFn, R, cabs(z))
ACCEL_COMPLEX_UNARY(ComplexAngleFn, R, carg(z))
ACCEL_COMPLEX_UNARY(ComplexConjFn, T, cconj(z))
ACCEL_COMPLEX_UNARY(ComplexSgnFn, T, csgn(z))
ACCEL_COMPLEX_UNARY(ComplexExpFn, T, cexp(z))
ACCEL_COMPLEX_UNARY(ComplexLogFn, T, clog(z))
ACCEL_COMPLEX_UNARY(ComplexSqrtFn, T, csqrt(z))
ACCEL_COMPLEX_UNARY(ComplexRsqrtFn, T, T(R(1)) / csqrt(z))
ACCEL_COMPLEX_UNARY(ComplexSinFn, T, csin(z))
ACCEL_COMPLEX_UNARY(ComplexCosFn, T, ccos(z))
ACCEL_COMPLEX_UNARY(ComplexTanhFn, T, ctanh(z))
ACCEL_COMPLEX_UNARY(ComplexSinhFn, T, csinh(z))
ACCEL_COMPLEX_UNARY(ComplexCoshFn, T, ccosh(z))
ACCEL_COMPLEX_UNARY(ComplexTanFn, T, ctan(z))
// 2^z = e^(z ln 2); log2 and log10 divide log's components by ln 2 and ln 10.
ACCEL_COMPLEX_UNARY(ComplexExp2Fn, T, cexp(cscale(z, R(0.6931471805599453))))
ACCEL_COMPLEX_UNARY(ComplexLog2Fn, T, cscale(clog(z), R(1.4426950408889634)))
ACCEL_COMPLEX_UNARY(ComplexLog10Fn, T, cscale(clog(z), R(0.4342944819032518)))
ACCEL_COMPLEX_UNARY(ComplexSigmoidFn, T, T(R(1)) / (T(R(1)) + cexp(-z)))
ACCEL_COMPLEX_UNARY(ComplexSiluFn, T, z / (T(R(1)) + cexp(-z)))
ACCEL_COMPLEX_UNARY(ComplexIsNanFn, bool, z.re != z.re || z.im != z.im)
ACCEL_COMPLEX_UNARY(ComplexIsFiniteFn, bool, std::isfinite(z.re) && std::isfinite(z.im))
#undef ACCEL_COMPLEX_UNARY

// The ops defined on complex inputs, and what they write: the input's dtype, bool, or the
// input's real dtype.
enum class ComplexResult { Same, Bool, Real, None };
inline ComplexResult complexUnaryResult(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Conj:
    case UnaryOp::Sgn:
    case UnaryOp::Reciprocal:
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tanh:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Tan:
    case UnaryOp::Exp2:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Silu:
    case UnaryOp::Sigmoid: return ComplexResult::Same;
    case UnaryOp::LogicalNot:
    case UnaryOp::IsNan:
    case UnaryOp::IsFinite: return ComplexResult::Bool;
    case UnaryOp::Abs:
    case UnaryOp::Angle: return ComplexResult::Real;
    default: return ComplexResult::None;
  }
}

template <class Exec>
rt::Error launchComplexUnary(UnaryOp op, const ElementwiseDesc& d, rt::Stream stream) {
  const DType in = d.op[1].dtype;
  return dispatchComplex(in, [&](auto tag) -> rt::Error {
    using S = typename decltype(tag)::type;
    using T = OpMath<S>;
    using R = RealOfT<S>;
    const ComplexResult kind = complexUnaryResult(op);
    const DType want = kind == ComplexResult::Same   ? in
                       : kind == ComplexResult::Bool ? DType::Bool
                                                     : realDType(in);
    const bool out_ok = d.op[0].dtype == want;
    if (kind == ComplexResult::None || !out_ok) return rt::Error::InvalidValue;
    // ComplexHalf: only what CPU defines on it (the rest compute in complex64 or fall back).
    if constexpr (!std::is_same_v<S, T>) {
      switch (op) {
        case UnaryOp::Neg: return runUnary<Exec, S, S>(d, NegFn<T>{}, stream);
        case UnaryOp::Conj: return runUnary<Exec, S, S>(d, ComplexConjFn<T>{}, stream);
        case UnaryOp::IsNan: return runUnary<Exec, bool, S>(d, ComplexIsNanFn<T>{}, stream);
        default: return rt::Error::NotSupported;
      }
    } else {
#define ACCEL_RUN(FN) return runUnary<Exec, S, S>(d, FN<T>{}, stream)
#define ACCEL_RUN_BOOL(FN) return runUnary<Exec, bool, S>(d, FN<T>{}, stream)
      switch (op) {
        case UnaryOp::Neg: ACCEL_RUN(NegFn);
        case UnaryOp::Conj: ACCEL_RUN(ComplexConjFn);
        case UnaryOp::Sgn: ACCEL_RUN(ComplexSgnFn);
        case UnaryOp::Reciprocal: ACCEL_RUN(ReciprocalFn);
        case UnaryOp::Exp: ACCEL_RUN(ComplexExpFn);
        case UnaryOp::Log: ACCEL_RUN(ComplexLogFn);
        case UnaryOp::Sqrt: ACCEL_RUN(ComplexSqrtFn);
        case UnaryOp::Rsqrt: ACCEL_RUN(ComplexRsqrtFn);
        case UnaryOp::Sin: ACCEL_RUN(ComplexSinFn);
        case UnaryOp::Cos: ACCEL_RUN(ComplexCosFn);
        case UnaryOp::Tanh: ACCEL_RUN(ComplexTanhFn);
        case UnaryOp::Sinh: ACCEL_RUN(ComplexSinhFn);
        case UnaryOp::Cosh: ACCEL_RUN(ComplexCoshFn);
        case UnaryOp::Tan: ACCEL_RUN(ComplexTanFn);
        case UnaryOp::Exp2: ACCEL_RUN(ComplexExp2Fn);
        case UnaryOp::Log2: ACCEL_RUN(ComplexLog2Fn);
        case UnaryOp::Log10: ACCEL_RUN(ComplexLog10Fn);
        case UnaryOp::Sigmoid: ACCEL_RUN(ComplexSigmoidFn);
        case UnaryOp::Silu: ACCEL_RUN(ComplexSiluFn);
        case UnaryOp::LogicalNot: ACCEL_RUN_BOOL(LogicalNotFn);
        case UnaryOp::IsNan: ACCEL_RUN_BOOL(ComplexIsNanFn);
        case UnaryOp::IsFinite: ACCEL_RUN_BOOL(ComplexIsFiniteFn);
        case UnaryOp::Abs: return runUnary<Exec, R, S>(d, ComplexAbsFn<T>{}, stream);
        case UnaryOp::Angle: return runUnary<Exec, R, S>(d, ComplexAngleFn<T>{}, stream);
        default: return rt::Error::NotSupported;
      }
#undef ACCEL_RUN
#undef ACCEL_RUN_BOOL
    }
  });
}

template <class Exec>
rt::Error launchUnary(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p,
                      rt::Stream stream) {
  if (rt::Error e = validate(d, 2, /*complex_ok=*/true); e != rt::Error::Success) return e;
  if (isComplex(d.op[1].dtype)) return launchComplexUnary<Exec>(op, d, stream);
  if (isComplex(d.op[0].dtype)) return rt::Error::InvalidValue;
  const bool predicate = op == UnaryOp::LogicalNot || op == UnaryOp::IsNan ||
                         op == UnaryOp::IsFinite || op == UnaryOp::Signbit;
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
        case UnaryOp::Signbit: ACCEL_RUN_BOOL(SignbitFn);
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
          case UnaryOp::Sinh: ACCEL_RUN(SinhFn);
          case UnaryOp::Cosh: ACCEL_RUN(CoshFn);
          case UnaryOp::Tan: ACCEL_RUN(TanFn);
          case UnaryOp::Log10: ACCEL_RUN(Log10Fn);
          case UnaryOp::Sigmoid: ACCEL_RUN(SigmoidFn);
          case UnaryOp::Erf: ACCEL_RUN(ErfFn);
          case UnaryOp::Floor: ACCEL_RUN(FloorFn);
          case UnaryOp::Ceil: ACCEL_RUN(CeilFn);
          case UnaryOp::Round: ACCEL_RUN(RoundFn);
          case UnaryOp::Trunc: ACCEL_RUN(TruncFn);
          case UnaryOp::Silu: ACCEL_RUN(SiluFn);
          case UnaryOp::Gelu: ACCEL_RUN(GeluFn);
          case UnaryOp::GeluTanh: ACCEL_RUN(GeluTanhFn);
          case UnaryOp::Acos: ACCEL_RUN(AcosFn);
          case UnaryOp::Asin: ACCEL_RUN(AsinFn);
          case UnaryOp::Atan: ACCEL_RUN(AtanFn);
          case UnaryOp::Acosh: ACCEL_RUN(AcoshFn);
          case UnaryOp::Asinh: ACCEL_RUN(AsinhFn);
          case UnaryOp::Atanh: ACCEL_RUN(AtanhFn);
          case UnaryOp::Erfc: ACCEL_RUN(ErfcFn);
          case UnaryOp::Erfinv: ACCEL_RUN(ErfinvFn);
          case UnaryOp::Lgamma: ACCEL_RUN(LgammaFn);
          case UnaryOp::Digamma: ACCEL_RUN(DigammaFn);
          case UnaryOp::I0: ACCEL_RUN(I0Fn);
          case UnaryOp::I0e: ACCEL_RUN(I0eFn);
          case UnaryOp::I1: ACCEL_RUN(I1Fn);
          case UnaryOp::I1e: ACCEL_RUN(I1eFn);
          case UnaryOp::BesselJ0: ACCEL_RUN(BesselJ0Fn);
          case UnaryOp::BesselJ1: ACCEL_RUN(BesselJ1Fn);
          case UnaryOp::BesselY0: ACCEL_RUN(BesselY0Fn);
          case UnaryOp::BesselY1: ACCEL_RUN(BesselY1Fn);
          case UnaryOp::SphericalBesselJ0: ACCEL_RUN(SphericalBesselJ0Fn);
          case UnaryOp::Erfcx: ACCEL_RUN(ErfcxFn);
          case UnaryOp::LogNdtr: ACCEL_RUN(LogNdtrFn);
          case UnaryOp::Entr: ACCEL_RUN(EntrFn);
          case UnaryOp::Sinc: ACCEL_RUN(SincFn);
          case UnaryOp::Frac: ACCEL_RUN(FracFn);
          case UnaryOp::Angle: ACCEL_RUN(AngleFn);
          case UnaryOp::Polygamma: return runUnary<Exec, S, S>(d, PolygammaFn<T>{p.a.i}, stream);
          case UnaryOp::RoundDecimals: {
            const int64_t decimals = p.a.i;
            const double ten =
                std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
            return runUnary<Exec, S, S>(d, RoundDecimalsFn<T>{static_cast<T>(ten), decimals < 0},
                                        stream);
          }
          case UnaryOp::Logit: {
            const T lo = p.has_a ? castTo<T>(castTo<S>(scalarAs<T>(p.a))) : T(0);
            return runUnary<Exec, S, S>(d, LogitFn<T>{lo, T(1) - lo, p.has_a}, stream);
          }
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
