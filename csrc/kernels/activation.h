// The activations that take parameters, and their backward: leaky_relu, elu (and so selu and
// celu), hardtanh's backward, hardswish, hardsigmoid, mish, log_sigmoid, softshrink,
// hardshrink, threshold, softplus's backward and logit's backward. Floating dtypes only, computed
// in the opmath type, with the formulas of ATen's CPU and CUDA kernels. Knows no torch.
#pragma once

#include <cmath>
#include <limits>

#include "kernels/elementwise.h"

namespace accel::kernels {

enum class ActivationOp : int {
  LeakyRelu,    // a = negative slope
  Elu,          // a = alpha * scale, b = scale, c = input_scale; backward: flag = from the result
  Hardtanh,     // a = min, b = max (backward only: the forward is clamp)
  Hardswish,    //
  Hardsigmoid,  //
  Mish,         //
  LogSigmoid,   //
  Softshrink,   // a = lambda
  Hardshrink,   // a = lambda
  Threshold,    // a = threshold, b = value (forward only: the backward is ThresholdBackward)
  Softplus,     // a = beta, b = threshold (backward only: the forward is a unary op)
  Logit,        // a = eps, b = 1 - eps, flag = eps given (backward only: the forward is unary)
};

struct ActivationParams {
  double a = 0, b = 0, c = 0;
  bool flag = false;
};

struct ActivationTable {
  // out = op(x): operand 0 out, operand 1 x, one floating dtype.
  rt::Error (*forward)(ActivationOp op, const ElementwiseDesc& d, const ActivationParams& p,
                       rt::Stream stream);
  // grad_input = op's backward: operand 0 grad_input, 1 the incoming gradient, 2 the forward
  // input (or for Elu with flag set, its result), one floating dtype.
  rt::Error (*backward)(ActivationOp op, const ElementwiseDesc& d, const ActivationParams& p,
                        rt::Stream stream);
  template <class Exec>
  static ActivationTable make();
};
const ActivationTable& activationTable();  // the build of the driver in use

// One functor per op (Op a template argument), so each dense loop is a plain typed loop.
template <class T, ActivationOp Op>
struct ActivationForward {
  using compute_t = T;
  T a, b, c;
  ACCEL_HD static T clamp6(T v) { return v < T(0) ? T(0) : (v > T(6) ? T(6) : v); }
  ACCEL_HD T operator()(T x) const {
    if constexpr (Op == ActivationOp::LeakyRelu) {
      return x > T(0) ? x : x * a;
    } else if constexpr (Op == ActivationOp::Elu) {
      return x <= T(0) ? std::expm1(x * c) * a : x * b;
    } else if constexpr (Op == ActivationOp::Hardswish) {
      return x * clamp6(x + T(3)) / T(6);
    } else if constexpr (Op == ActivationOp::Hardsigmoid) {
      return clamp6(x + T(3)) / T(6);
    } else if constexpr (Op == ActivationOp::Mish) {
      return x * std::tanh(std::log1p(std::exp(x)));
    } else if constexpr (Op == ActivationOp::LogSigmoid) {
      const T lo = x < T(0) ? x : T(0);
      return lo - std::log1p(std::exp(-std::fabs(x)));
    } else if constexpr (Op == ActivationOp::Softshrink) {
      return x > a ? x - a : (x < -a ? x + a : T(0) * x);  // a NaN stays NaN, as in ATen
    } else if constexpr (Op == ActivationOp::Hardshrink) {
      return (x >= -a && x <= a) ? T(0) : x;
    } else {
      static_assert(Op == ActivationOp::Threshold, "no forward of its own");
      return x <= a ? b : x;
    }
  }
};

// (grad, x) -> grad_input.
template <class T, ActivationOp Op>
struct ActivationBackward {
  using compute_t = T;
  T a, b, c;
  bool flag;  // Elu: x is the forward's result; Logit: eps was given
  ACCEL_HD T operator()(T g, T x) const {
    if constexpr (Op == ActivationOp::LeakyRelu) {
      return x > T(0) ? g : g * a;
    } else if constexpr (Op == ActivationOp::Elu) {
      if (x > T(0)) return g * b;
      return flag ? g * c * (x + a) : g * c * a * std::exp(x * c);
    } else if constexpr (Op == ActivationOp::Hardtanh) {
      return (x <= a || x >= b) ? T(0) : g;
    } else if constexpr (Op == ActivationOp::Hardswish) {
      return x <= T(-3) ? T(0) : (x < T(3) ? g * ((x / T(3)) + T(0.5)) : g);
    } else if constexpr (Op == ActivationOp::Hardsigmoid) {
      // 1/6 in float for every dtype, as ATen's constant.
      return (x > T(-3) && x < T(3)) ? g * static_cast<T>(1.0f / 6.0f) : T(0);
    } else if constexpr (Op == ActivationOp::Mish) {
      const T sigmoid = T(1) / (T(1) + std::exp(-x));
      const T t = std::tanh(std::log1p(std::exp(x)));
      return g * (t + x * sigmoid * (T(1) - t * t));
    } else if constexpr (Op == ActivationOp::LogSigmoid) {
      const bool negative = x < T(0);
      const T z = std::exp(-std::fabs(x));
      return g * ((negative ? T(1) : T(0)) - (negative ? T(1) : T(-1)) * (z / (T(1) + z)));
    } else if constexpr (Op == ActivationOp::Softshrink || Op == ActivationOp::Hardshrink) {
      return (x >= -a && x <= a) ? T(0) : g;
    } else if constexpr (Op == ActivationOp::Softplus) {
      const T z = std::exp(x * a);
      return x * a > b ? g : g * z / (z + T(1));
    } else {
      static_assert(Op == ActivationOp::Logit, "no backward of its own");
      // Outside [eps, 1 - eps] the clamped forward is flat; without eps, outside [0, 1] it is
      // undefined. A NaN eps bounds nothing, as in ATen.
      if (flag ? (x < a || x > b) : (x < T(0) || x > T(1)))
        return flag ? T(0) : std::numeric_limits<T>::quiet_NaN();
      if (x == T(0) || x == T(1)) return g * std::numeric_limits<T>::infinity();
      return g / (x * (T(1) - x));
    }
  }
};

// The shrinks' lambda and logit's eps are rounded to the storage dtype first, as ATen does (a
// bfloat16 input equal to the rounded lambda is inside the band), and logit's 1 - eps is
// computed and rounded in it (in bfloat16, 1 - 1e-3 is 1).
template <class S, class T>
T paramA(ActivationOp op, const ActivationParams& p) {
  if (op == ActivationOp::Softshrink || op == ActivationOp::Hardshrink || op == ActivationOp::Logit)
    return static_cast<T>(static_cast<S>(p.a));
  return static_cast<T>(p.a);
}
template <class S, class T>
T paramB(ActivationOp op, const ActivationParams& p) {
  if (op == ActivationOp::Logit) return static_cast<T>(static_cast<S>(T(1) - paramA<S, T>(op, p)));
  return static_cast<T>(p.b);
}

// What both launchers share: the operand checks, the dtype switch and the parameters in the
// opmath type; calls f(TypeTag<storage type>{}, a, b, c).
template <class F>
rt::Error withActivationTypes(ActivationOp op, const ElementwiseDesc& d, int noperands,
                              const ActivationParams& p, F&& f) {
  if (rt::Error e = validate(d, noperands); e != rt::Error::Success) return e;
  if (!allSameDType(d)) return rt::Error::InvalidValue;
  return dispatchDType(d.op[0].dtype, [&](auto tag) -> rt::Error {
    using S = typename decltype(tag)::type;
    if constexpr (!isFloating<S>) {
      return rt::Error::NotSupported;
    } else {
      using T = OpMath<S>;
      return f(tag, paramA<S, T>(op, p), paramB<S, T>(op, p), static_cast<T>(p.c));
    }
  });
}

template <class Exec>
rt::Error launchActivation(ActivationOp op, const ElementwiseDesc& d, const ActivationParams& p,
                           rt::Stream stream) {
  return withActivationTypes(op, d, 2, p, [&](auto tag, auto a, auto b, auto c) -> rt::Error {
    using S = typename decltype(tag)::type;
    using T = decltype(a);
    switch (op) {
#define ACCEL_RUN(OP)    \
  case ActivationOp::OP: \
    return Exec::template run<S, S>(d, ActivationForward<T, ActivationOp::OP>{a, b, c}, stream);
      ACCEL_RUN(LeakyRelu)
      ACCEL_RUN(Elu)
      ACCEL_RUN(Hardswish)
      ACCEL_RUN(Hardsigmoid)
      ACCEL_RUN(Mish)
      ACCEL_RUN(LogSigmoid)
      ACCEL_RUN(Softshrink)
      ACCEL_RUN(Hardshrink)
      ACCEL_RUN(Threshold)
#undef ACCEL_RUN
      default: return rt::Error::InvalidValue;
    }
  });
}

template <class Exec>
rt::Error launchActivationBackward(ActivationOp op, const ElementwiseDesc& d,
                                   const ActivationParams& p, rt::Stream stream) {
  return withActivationTypes(op, d, 3, p, [&](auto tag, auto a, auto b, auto c) -> rt::Error {
    using S = typename decltype(tag)::type;
    using T = decltype(a);
    switch (op) {
#define ACCEL_RUN(OP)                   \
  case ActivationOp::OP:                \
    return Exec::template run<S, S, S>( \
        d, ActivationBackward<T, ActivationOp::OP>{a, b, c, p.flag}, stream);
      ACCEL_RUN(LeakyRelu)
      ACCEL_RUN(Elu)
      ACCEL_RUN(Hardtanh)
      ACCEL_RUN(Hardswish)
      ACCEL_RUN(Hardsigmoid)
      ACCEL_RUN(Mish)
      ACCEL_RUN(LogSigmoid)
      ACCEL_RUN(Softshrink)
      ACCEL_RUN(Hardshrink)
      ACCEL_RUN(Softplus)
      ACCEL_RUN(Logit)
#undef ACCEL_RUN
      default: return rt::Error::InvalidValue;
    }
  });
}

template <class Exec>
ActivationTable ActivationTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(ActivationTable::forward)>(&launchActivation<Exec>),
          static_cast<decltype(ActivationTable::backward)>(&launchActivationBackward<Exec>)};
}

}  // namespace accel::kernels
