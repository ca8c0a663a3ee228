// Binary arithmetic: out = a op (alpha * b) for Add/Sub, out = a op b for Mul/Div. Computed in
// the output dtype's opmath type (float for half/bfloat16), like ATen. For bool, the int
// promotion of C++ makes Add a logical or and Mul a logical and, as in PyTorch.
#pragma once

#include "kernels/elementwise.h"
#include "kernels/fill.h"

namespace accel::kernels {

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

// Inputs already in the output dtype (the usual case after TensorIterator's type promotion)
// get typed loads and the dense fast path; mixed dtypes are cast per element.
template <class Exec, class Out, class F>
rt::Error runBinary(const ElementwiseDesc& d, const F& f, rt::Stream stream) {
  if (d.op[1].dtype == d.op[0].dtype && d.op[2].dtype == d.op[0].dtype)
    return Exec::template run<Out, Out, Out>(d, f, stream);
  return Exec::template run<Out, AnyDType, AnyDType>(d, f, stream);
}

template <class Exec>
rt::Error launchBinary(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream) {
  if (rt::Error e = validate(d, 3); e != rt::Error::Success) return e;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using Out = typename decltype(tag)::type;
    using T = OpMath<Out>;
    switch (op) {
      case BinaryOp::Add:
        return runBinary<Exec, Out>(d, AddOp<T>{scalarAs<T>(alpha)}, stream);
      case BinaryOp::Sub:
        return runBinary<Exec, Out>(d, SubOp<T>{scalarAs<T>(alpha)}, stream);
      case BinaryOp::Mul:
        return runBinary<Exec, Out>(d, MulOp<T>{}, stream);
      case BinaryOp::Div:
        // The aten layer only divides into floating outputs (true division).
        if constexpr (isFloating<Out>) return runBinary<Exec, Out>(d, DivOp<T>{}, stream);
        return rt::Error::NotSupported;
    }
    return rt::Error::InvalidValue;
  });
}

// out = a op rhs, with rhs a scalar passed by value (a Python number never visits the device).
template <class Op>
struct WithScalar {
  using compute_t = typename Op::compute_t;
  Op op;
  compute_t rhs;
  ACCEL_HD compute_t operator()(compute_t a) const { return op(a, rhs); }
};

template <class Exec>
rt::Error launchBinaryScalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs,
                             rt::Stream stream) {
  if (rt::Error e = validate(d, 2); e != rt::Error::Success) return e;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using Out = typename decltype(tag)::type;
    using T = OpMath<Out>;
    auto run = [&](auto f) {
      if (d.op[1].dtype == d.op[0].dtype) return Exec::template run<Out, Out>(d, f, stream);
      return Exec::template run<Out, AnyDType>(d, f, stream);
    };
    T value = scalarAs<T>(rhs);
    switch (op) {
      case BinaryOp::Add:
        return run(WithScalar<AddOp<T>>{AddOp<T>{T(1)}, value});
      case BinaryOp::Sub:
        return run(WithScalar<SubOp<T>>{SubOp<T>{T(1)}, value});
      case BinaryOp::Mul:
        return run(WithScalar<MulOp<T>>{MulOp<T>{}, value});
      case BinaryOp::Div:
        if constexpr (isFloating<Out>) return run(WithScalar<DivOp<T>>{DivOp<T>{}, value});
        return rt::Error::NotSupported;
    }
    return rt::Error::InvalidValue;
  });
}

}  // namespace accel::kernels
