// Binary arithmetic: out = a op (alpha * b) for Add/Sub, out = a op b for Mul/Div. Computed in
// the output dtype's opmath type (float for half/bfloat16), like ATen. For bool, the int
// promotion of C++ makes Add a logical or and Mul a logical and, as in PyTorch.
//
// The other ops (division with rounding, pow, max/min, remainder, bitwise, and the
// activations' backward) need both inputs already in the output dtype, so only the typed
// path is instantiated for them.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/elementwise.h"
#include "kernels/reduce_math.h"
#include "kernels/fill.h"
#include "kernels/incomplete_gamma.h"
#include "kernels/orthogonal_polynomials.h"
#include "kernels/special_math.h"
#include "kernels/ternary.h"
#include "kernels/unary.h"

namespace accel::kernels {

// Add and Sub take alpha; Lerp takes the weight and ThresholdBackward the threshold as alpha
// (both only with two tensors, never with a scalar rhs). Every op after Div needs both inputs in
// the output dtype.
enum class BinaryOp : int {
  Add,
  Sub,
  Mul,
  Div,
  DivFloor,
  DivTrunc,
  Pow,
  Maximum,
  Minimum,
  Remainder,
  Fmod,
  Atan2,
  Hypot,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  Lerp,  // a + alpha * (b - a), alpha the weight (a tensor weight is TernaryOp::Lerp)
  // Backward of activations: a is the incoming gradient, b the forward input (or output).
  GeluBackward,
  GeluTanhBackward,
  SiluBackward,
  TanhBackward,
  SigmoidBackward,
  ThresholdBackward,
  // Any real dtype.
  Fmax,
  Fmin,
  Heaviside,
  // Integers only.
  Gcd,
  Lcm,
  ShiftLeft,
  ShiftRight,
  // Floating only (NextAfter: float and double).
  Copysign,
  LogAddExp,
  LogAddExp2,
  Xlog1py,
  Zeta,
  Igamma,             // P(a, b), the regularized lower incomplete gamma
  Igammac,            // Q(a, b) = 1 - P(a, b)
  StandardGammaGrad,  // d b / d a for a sample b of Gamma(a, 1)
  NextAfter,
  // The orthogonal polynomials p_n(x): a = x, b = n (cast to an integer).
  ChebyshevT,
  ChebyshevU,
  ChebyshevV,
  ChebyshevW,
  ShiftedChebyshevT,
  ShiftedChebyshevU,
  ShiftedChebyshevV,
  ShiftedChebyshevW,
  HermiteH,
  HermiteHe,
  LaguerreL,
  LegendreP,
};

struct BinaryTable {
  // out = a op (alpha * b) for Add/Sub (alpha ignored otherwise); computed in out's dtype.
  rt::Error (*binary)(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream);
  // out = a op rhs: operand 0 is the output, operand 1 the tensor input.
  rt::Error (*binary_scalar)(BinaryOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream);
  template <class Exec>
  static BinaryTable make();
};
const BinaryTable& binaryTable();  // the build of the driver in use

template <class T>
struct AddOp {
  using compute_t = T;
  T alpha;
  ACCEL_HD T operator()(T a, T b) const { return static_cast<T>(a + alpha * b); }
};

template <class T>
struct SubOp {
  using compute_t = T;
  T alpha;
  ACCEL_HD T operator()(T a, T b) const { return static_cast<T>(a - alpha * b); }
};

template <class T>
struct MulOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const { return static_cast<T>(a * b); }
};

template <class T>
struct DivOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const { return a / b; }
};

#define ACCEL_BINARY_FUNCTOR(NAME, EXPR)                   \
  template <class T>                                       \
  struct NAME {                                            \
    using compute_t = T;                                   \
    ACCEL_HD T operator()(T a, T b) const { return EXPR; } \
  };

// NaN-propagating, like torch.maximum / torch.minimum.
ACCEL_BINARY_FUNCTOR(MaximumOp, a != a ? a : (b != b ? b : (a > b ? a : b)))
ACCEL_BINARY_FUNCTOR(MinimumOp, a != a ? a : (b != b ? b : (a < b ? a : b)))
// clang-format would read `T>(a & b` as a declaration.
// clang-format off
ACCEL_BINARY_FUNCTOR(BitwiseAndOp, static_cast<T>(a & b))
// clang-format on
ACCEL_BINARY_FUNCTOR(BitwiseOrOp, static_cast<T>(a | b))
ACCEL_BINARY_FUNCTOR(BitwiseXorOp, static_cast<T>(a ^ b))
ACCEL_BINARY_FUNCTOR(Atan2Op, std::atan2(a, b))
ACCEL_BINARY_FUNCTOR(HypotOp, std::hypot(a, b))
// NaN-ignoring (the other operand wins), like torch.fmax / torch.fmin.
ACCEL_BINARY_FUNCTOR(FmaxOp, a != a ? b : (b != b ? a : (a > b ? a : b)))
ACCEL_BINARY_FUNCTOR(FminOp, a != a ? b : (b != b ? a : (a < b ? a : b)))
ACCEL_BINARY_FUNCTOR(HeavisideOp, a == T(0) ? b : static_cast<T>(a > T(0)))
ACCEL_BINARY_FUNCTOR(CopysignOp, std::copysign(a, b))
ACCEL_BINARY_FUNCTOR(NextAfterOp, std::nextafter(a, b))
// x log1p(y): NaN when y is, else 0 where x is 0.
ACCEL_BINARY_FUNCTOR(Xlog1pyOp, b != b ? b : (a == T(0) ? T(0) : a * std::log1p(b)))
ACCEL_BINARY_FUNCTOR(ZetaOp,
                     static_cast<T>(hurwitzZeta(static_cast<double>(a), static_cast<double>(b))))
ACCEL_BINARY_FUNCTOR(IgammaOp, static_cast<T>(incompleteGamma(static_cast<double>(a),
                                                              static_cast<double>(b), false)))
ACCEL_BINARY_FUNCTOR(IgammacOp, static_cast<T>(incompleteGamma(static_cast<double>(a),
                                                               static_cast<double>(b), true)))
ACCEL_BINARY_FUNCTOR(StandardGammaGradOp, static_cast<T>(standardGammaGrad(static_cast<double>(a),
                                                                           static_cast<double>(b))))
ACCEL_BINARY_FUNCTOR(TanhBackwardOp, a*(T(1) - b * b))
ACCEL_BINARY_FUNCTOR(SigmoidBackwardOp, a*(T(1) - b) * b)
#undef ACCEL_BINARY_FUNCTOR

// log(e^a + e^b) (base 2 for Log2) as max + log1p(e^-|a - b|); equal infinities are themselves.
template <class T, bool Log2>
struct LogAddExpOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    if constexpr (Log2) {
      if (std::isinf(a) && a == b) return a;
      const T m = a > b ? a : b, d = -std::fabs(a - b);
      return m + std::log1p(std::exp2(d)) * T(1.4426950408889634);
    } else {
      return logAddExp(a, b);
    }
  }
};

// p_n(x), the shifted Chebyshev polynomials at 2x - 1.
template <class T>
struct PolynomialOp {
  using compute_t = T;
  Polynomial kind;
  bool shifted;
  ACCEL_HD T operator()(T x, T n) const {
    return orthogonalPolynomial(kind, shifted ? x + x - T(1) : x, static_cast<int64_t>(n));
  }
};

// Euclid's algorithm on |a| and |b|, and lcm = |a / gcd * b| (0 when both are).
template <class T>
ACCEL_HD inline T gcdOf(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    a = a < 0 ? static_cast<T>(-a) : a;
    b = b < 0 ? static_cast<T>(-b) : b;
  }
  while (a != 0) {
    const T c = a;
    a = static_cast<T>(b % a);
    b = c;
  }
  return b;
}
template <class T>
struct GcdOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const { return gcdOf(a, b); }
};
template <class T>
struct LcmOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    const T g = gcdOf(a, b);
    if (g == 0) return T(0);
    const T l = static_cast<T>(a / g * b);
    if constexpr (std::is_signed_v<T>)
      return l < 0 ? static_cast<T>(-l) : l;
    else
      return l;
  }
};

// Shifts by b bits; a count outside [0, bits) gives 0 to the left and the sign fill to the
// right, as ATen.
template <class T, bool Left>
struct ShiftOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    const bool outside = b < T(0) || b >= kBits;
    if constexpr (Left) {
      return outside ? T(0) : static_cast<T>(static_cast<U>(a) << b);
    } else {
      if (outside) return std::is_signed_v<T> && a < T(0) ? T(-1) : T(0);
      return static_cast<T>(a >> b);
    }
  }
};

// S is the storage dtype: ATen (CPU and CUDA) rounds a half/bfloat16 quotient to it before
// truncating, so 17.96 becomes 18, not 17.
template <class T, class S = T>
struct DivTruncOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    if constexpr (isFloating<T>)
      return std::trunc(castTo<T>(castTo<S>(a / b)));
    else
      return b == T(0) ? T(0) : static_cast<T>(a / b);
  }
};

// ATen's div_floor: floor of the true quotient, computed from fmod to stay exact.
template <class T>
struct DivFloorOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    if constexpr (isFloating<T>) {
      if (b == T(0)) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
      if (div == T(0)) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else {
      if (b == T(0)) return T(0);
      T q = static_cast<T>(a / b);
      if constexpr (std::is_signed_v<T>) {
        if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
      }
      return q;
    }
  }
};

// Python's modulo: the result has the divisor's sign.
template <class T>
struct RemainderOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    if constexpr (isFloating<T>) {
      T mod = std::fmod(a, b);
      if (mod != T(0) && (b < T(0)) != (mod < T(0))) mod += b;
      return mod;
    } else {
      if (b == T(0)) return T(0);
      T mod = static_cast<T>(a % b);
      if constexpr (std::is_signed_v<T>) {
        if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
      }
      return mod;
    }
  }
};

// C's fmod: the result has the dividend's sign.
template <class T>
struct FmodOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    if constexpr (isFloating<T>)
      return std::fmod(a, b);
    else
      return b == T(0) ? T(0) : static_cast<T>(a % b);
  }
};

// Integer powers by squaring (negative exponents as in ATen: 1, -1 or 0); pow for floating.
// (A scalar exponent of 2 never gets here: aten/binary_math_ops.cpp runs it as a * a.)
template <class T>
struct PowOp {
  using compute_t = T;
  ACCEL_HD T operator()(T a, T b) const {
    if constexpr (isFloating<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) {
          if (a == 1) return T(1);
          if (a == -1) return (b & 1) ? T(-1) : T(1);
          return T(0);
        }
      }
      T result = 1, base = a;
      for (T e = b; e != 0; e = static_cast<T>(e >> 1)) {
        if (e & 1) result = static_cast<T>(result * base);
        base = static_cast<T>(base * base);
      }
      return result;
    }
  }
};

// a = grad, b = the forward input.
template <class T>
struct GeluBackwardOp {
  using compute_t = T;
  ACCEL_HD T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + verf(x * T(kSqrtHalf)));
    const T pdf = vexp(T(-0.5) * x * x) * T(kSqrt2OverPi * 0.5);
    return g * (cdf + x * pdf);
  }
};

template <class T>
struct GeluTanhBackwardOp {
  using compute_t = T;
  ACCEL_HD T operator()(T g, T x) const {
    const T k = T(kSqrt2OverPi), c = T(0.044715);
    const T inner = k * (x + c * x * x * x);
    const T t = vtanh(inner);
    const T left = T(0.5) * x, right = T(1) + t;
    const T dinner = k * (T(1) + T(3) * c * x * x);
    return g * (T(0.5) * right + left * (T(1) - t * t) * dinner);
  }
};

template <class T>
struct SiluBackwardOp {
  using compute_t = T;
  ACCEL_HD T operator()(T g, T x) const {
    const T s = T(1) / (T(1) + vexp(-x));
    return g * s * (T(1) + x * (T(1) - s));
  }
};

// a = grad, b = the forward input: grad where input > threshold, else 0.
template <class T>
struct ThresholdBackwardOp {
  using compute_t = T;
  T threshold;
  ACCEL_HD T operator()(T g, T x) const { return x <= threshold ? T(0) : g; }
};

// lerp with a scalar weight, by ATen's formula (see lerpOf).
template <class T>
struct LerpScalarOp {
  using compute_t = T;
  T weight;
  ACCEL_HD T operator()(T a, T b) const { return lerpOf(a, b, weight); }
};

// The ops after Div, on one dtype: calls f(functor) for `op` if it applies to S.
template <class S, class F>
rt::Error withTypedBinary(BinaryOp op, Scalar arg, const F& f) {
  using T = OpMath<S>;
  switch (op) {
    case BinaryOp::Maximum: return f(MaximumOp<T>{});
    case BinaryOp::Minimum: return f(MinimumOp<T>{});
    case BinaryOp::ThresholdBackward: return f(ThresholdBackwardOp<T>{scalarAs<T>(arg)});
    case BinaryOp::Fmax: return f(FmaxOp<T>{});
    case BinaryOp::Fmin: return f(FminOp<T>{});
    case BinaryOp::Heaviside: return f(HeavisideOp<T>{});
    default: break;
  }
  if constexpr (std::is_same_v<S, bool>) {
    switch (op) {
      case BinaryOp::BitwiseAnd: return f(BitwiseAndOp<S>{});
      case BinaryOp::BitwiseOr: return f(BitwiseOrOp<S>{});
      case BinaryOp::BitwiseXor: return f(BitwiseXorOp<S>{});
      default: return rt::Error::NotSupported;
    }
  } else {
    switch (op) {
      case BinaryOp::DivFloor: return f(DivFloorOp<T>{});
      case BinaryOp::DivTrunc: return f(DivTruncOp<T, S>{});
      case BinaryOp::Pow: return f(PowOp<T>{});
      case BinaryOp::Remainder: return f(RemainderOp<T>{});
      case BinaryOp::Fmod: return f(FmodOp<T>{});
      default: break;
    }
    if constexpr (!isFloating<S>) {
      switch (op) {
        case BinaryOp::BitwiseAnd: return f(BitwiseAndOp<T>{});
        case BinaryOp::BitwiseOr: return f(BitwiseOrOp<T>{});
        case BinaryOp::BitwiseXor: return f(BitwiseXorOp<T>{});
        case BinaryOp::Gcd: return f(GcdOp<T>{});
        case BinaryOp::Lcm: return f(LcmOp<T>{});
        case BinaryOp::ShiftLeft: return f(ShiftOp<T, true>{});
        case BinaryOp::ShiftRight: return f(ShiftOp<T, false>{});
        default: return rt::Error::NotSupported;
      }
    } else {
      switch (op) {
        case BinaryOp::Atan2: return f(Atan2Op<T>{});
        case BinaryOp::Hypot: return f(HypotOp<T>{});
        case BinaryOp::Lerp: return f(LerpScalarOp<T>{scalarAs<T>(arg)});
        case BinaryOp::GeluBackward: return f(GeluBackwardOp<T>{});
        case BinaryOp::GeluTanhBackward: return f(GeluTanhBackwardOp<T>{});
        case BinaryOp::SiluBackward: return f(SiluBackwardOp<T>{});
        case BinaryOp::TanhBackward: return f(TanhBackwardOp<T>{});
        case BinaryOp::SigmoidBackward: return f(SigmoidBackwardOp<T>{});
        case BinaryOp::Copysign: return f(CopysignOp<T>{});
        case BinaryOp::LogAddExp: return f(LogAddExpOp<T, false>{});
        case BinaryOp::LogAddExp2: return f(LogAddExpOp<T, true>{});
        case BinaryOp::Xlog1py: return f(Xlog1pyOp<T>{});
        case BinaryOp::Zeta: return f(ZetaOp<T>{});
        case BinaryOp::Igamma: return f(IgammaOp<T>{});
        case BinaryOp::Igammac: return f(IgammacOp<T>{});
        case BinaryOp::StandardGammaGrad: return f(StandardGammaGradOp<T>{});
        case BinaryOp::ChebyshevT: return f(PolynomialOp<T>{Polynomial::ChebyshevT, false});
        case BinaryOp::ChebyshevU: return f(PolynomialOp<T>{Polynomial::ChebyshevU, false});
        case BinaryOp::ChebyshevV: return f(PolynomialOp<T>{Polynomial::ChebyshevV, false});
        case BinaryOp::ChebyshevW: return f(PolynomialOp<T>{Polynomial::ChebyshevW, false});
        case BinaryOp::ShiftedChebyshevT: return f(PolynomialOp<T>{Polynomial::ChebyshevT, true});
        case BinaryOp::ShiftedChebyshevU: return f(PolynomialOp<T>{Polynomial::ChebyshevU, true});
        case BinaryOp::ShiftedChebyshevV: return f(PolynomialOp<T>{Polynomial::ChebyshevV, true});
        case BinaryOp::ShiftedChebyshevW: return f(PolynomialOp<T>{Polynomial::ChebyshevW, true});
        case BinaryOp::HermiteH: return f(PolynomialOp<T>{Polynomial::HermiteH, false});
        case BinaryOp::HermiteHe: return f(PolynomialOp<T>{Polynomial::HermiteHe, false});
        case BinaryOp::LaguerreL: return f(PolynomialOp<T>{Polynomial::LaguerreL, false});
        case BinaryOp::LegendreP: return f(PolynomialOp<T>{Polynomial::LegendreP, false});
        case BinaryOp::NextAfter:
          if constexpr (std::is_same_v<S, T>)
            return f(NextAfterOp<T>{});
          else
            return rt::Error::NotSupported;  // half and bfloat16 step in their own ulps
        default: return rt::Error::NotSupported;
      }
    }
  }
}

// Inputs already in the output dtype (the usual case after TensorIterator's type promotion)
// get typed loads and the dense fast path; mixed dtypes are cast per element.
template <class Exec, class Out, class F>
rt::Error runBinary(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
  if (d.op[1].dtype == d.op[0].dtype && d.op[2].dtype == d.op[0].dtype)
    return Exec::template run<Out, Out, Out>(d, f, stream);
  return Exec::template run<Out, AnyDType, AnyDType>(d, f, stream);
}

// Add, Sub, Mul and Div into Out, real or complex (complex32 computes in complex64 and, as on
// CPU, is not divided). Div is true division: the aten layer only divides into floating or
// complex outputs. Alpha is applied with a full multiply, as on CPU (for complex values that
// makes 1 * (x + inf i) nan + inf i, there and here). NotSupported for the other ops.
template <class Exec, class Out>
rt::Error runArithmetic(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream) {
  using T = OpMath<Out>;
  constexpr bool divides = isFloating<Out> || (isComplexScalar<Out> && std::is_same_v<Out, T>);
  switch (op) {
    case BinaryOp::Add: return runBinary<Exec, Out>(d, AddOp<T>{scalarAs<T>(alpha)}, stream);
    case BinaryOp::Sub: return runBinary<Exec, Out>(d, SubOp<T>{scalarAs<T>(alpha)}, stream);
    case BinaryOp::Mul: return runBinary<Exec, Out>(d, MulOp<T>{}, stream);
    case BinaryOp::Div:
      if constexpr (divides)
        return runBinary<Exec, Out>(d, DivOp<T>{}, stream);
      else
        return rt::Error::NotSupported;
    default: return rt::Error::NotSupported;
  }
}

// The same with the rhs a scalar (operand 1 the tensor input).
template <class Exec, class Out>
rt::Error runArithmeticScalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs,
                              rt::Stream stream) {
  using T = OpMath<Out>;
  constexpr bool divides = isFloating<Out> || (isComplexScalar<Out> && std::is_same_v<Out, T>);
  auto run = [&](auto f) {
    if (d.op[1].dtype == d.op[0].dtype) return Exec::template run<Out, Out>(d, f, stream);
    return Exec::template run<Out, AnyDType>(d, f, stream);
  };
  const T value = scalarAs<T>(rhs);
  switch (op) {
    case BinaryOp::Add: return run(WithScalar<AddOp<T>>{AddOp<T>{T(1)}, value});
    case BinaryOp::Sub: return run(WithScalar<SubOp<T>>{SubOp<T>{T(1)}, value});
    case BinaryOp::Mul: return run(WithScalar<MulOp<T>>{MulOp<T>{}, value});
    case BinaryOp::Div:
      if constexpr (divides)
        return run(WithScalar<DivOp<T>>{DivOp<T>{}, value});
      else
        return rt::Error::NotSupported;
    default: return rt::Error::NotSupported;
  }
}

inline bool isArithmetic(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}

// Complex operands: only the arithmetic ops, into a complex output.
template <class Exec>
rt::Error launchBinary(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream) {
  if (rt::Error e = validate(d, 3, /*complex_ok=*/true); e != rt::Error::Success) return e;
  if (anyComplex(d)) {
    if (!isComplex(d.op[0].dtype)) return rt::Error::InvalidValue;
    return dispatchComplex(d.op[0].dtype, [&](auto tag) {
      return runArithmetic<Exec, typename decltype(tag)::type>(op, d, alpha, stream);
    });
  }
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using Out = typename decltype(tag)::type;
    if (isArithmetic(op)) return runArithmetic<Exec, Out>(op, d, alpha, stream);
    if (!allSameDType(d)) return rt::Error::InvalidValue;
    return withTypedBinary<Out>(
        op, alpha, [&](auto f) { return Exec::template run<Out, Out, Out>(d, f, stream); });
  });
}

template <class Exec>
rt::Error launchBinaryScalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream) {
  if (rt::Error e = validate(d, 2, /*complex_ok=*/true); e != rt::Error::Success) return e;
  if (anyComplex(d)) {
    if (!isComplex(d.op[0].dtype)) return rt::Error::InvalidValue;
    return dispatchComplex(d.op[0].dtype, [&](auto tag) {
      return runArithmeticScalar<Exec, typename decltype(tag)::type>(op, d, rhs, stream);
    });
  }
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using Out = typename decltype(tag)::type;
    using T = OpMath<Out>;
    if (isArithmetic(op)) return runArithmeticScalar<Exec, Out>(op, d, rhs, stream);
    if (!allSameDType(d) || op == BinaryOp::ThresholdBackward || op == BinaryOp::Lerp)
      return rt::Error::InvalidValue;
    const T value = scalarAs<T>(rhs);
    return withTypedBinary<Out>(op, rhs, [&](auto f) {
      using Op = decltype(f);
      return Exec::template run<Out, Out>(d, WithScalar<Op>{f, value}, stream);
    });
  });
}

template <class Exec>
BinaryTable BinaryTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(BinaryTable::binary)>(&launchBinary<Exec>),
          static_cast<decltype(BinaryTable::binary_scalar)>(&launchBinaryScalar<Exec>)};
}

}  // namespace accel::kernels
