// Unary math, activations, clamp (Scalar bounds) and nan_to_num: functional, in-place and out=
// forms. Integer inputs of float ops compute in the default float dtype, as in PyTorch.
#include <ATen/Dispatch.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <limits>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/fallback.h"
#include "kernels/copy.h"
#include "kernels/unary.h"

namespace accel {
namespace {

using kernels::UnaryOp;
using kernels::UnaryParams;

enum class Kind { Float, Same, Predicate, Rounding };

Kind kindOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Sign: case UnaryOp::Relu:
    case UnaryOp::BitwiseNot: case UnaryOp::Clamp:
      return Kind::Same;
    case UnaryOp::LogicalNot: case UnaryOp::IsNan: case UnaryOp::IsFinite:
      return Kind::Predicate;
    case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round: case UnaryOp::Trunc:
      return Kind::Rounding;
    default:
      return Kind::Float;
  }
}

// out = op(self); `out` undefined for the functional form.
at::Tensor unary(UnaryOp op, const at::Tensor& self, const at::Tensor& out,
                 const UnaryParams& p = {}) {
  const c10::ScalarType in = self.scalar_type();
  TORCH_CHECK(!(op == UnaryOp::Neg && in == c10::kBool),
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
              "to invert a mask, use the `~` or `logical_not()` operator instead.");
  const Kind kind = kindOf(op);
  c10::ScalarType compute = kind == Kind::Float ? floatingOf(in) : in;
  c10::ScalarType result = kind == Kind::Predicate ? c10::kBool : compute;
  // logical_not into a given output keeps that output's dtype.
  if (op == UnaryOp::LogicalNot && out.defined()) result = out.scalar_type();
  if (kind == Kind::Rounding && c10::isIntegralType(in, /*includeBool=*/true)) {
    // floor/ceil/round/trunc of an integer is the integer itself.
    return runElementwise(out, in, {self}, [](const kernels::ElementwiseDesc& d, rt::Stream s) {
      return kernels::copyTable().copy(d, s);
    });
  }
  at::Tensor input = asComputeInput(self, compute, self.device());
  if (op == UnaryOp::LogicalNot && result != c10::kBool) {
    at::Tensor tmp = unary(op, self, at::Tensor(), p);
    return runElementwise(out, result, {tmp}, [](const kernels::ElementwiseDesc& d, rt::Stream s) {
      return kernels::copyTable().copy(d, s);
    });
  }
  return runElementwise(out, result, {input},
                        [op, &p](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::unaryTable().unary(op, d, p, s);
                        });
}

bool supported(const at::Tensor& t) { return kernelSupports(t.scalar_type()); }
bool supported(const at::Tensor& t, const at::Tensor& out) {
  return supported(t) && kernelSupports(out.scalar_type());
}

// The registered forms of one op: `name`, `name_` and `name.out`.
template <UnaryOp Op>
struct Forms {
  static const char* name;
  static at::Tensor functional(const at::Tensor& self) {
    if (!supported(self)) {
      static auto op = findOp((std::string("aten::") + name).c_str(), "");
      return fallbackCall<at::Tensor>(op, self);
    }
    return unary(Op, self, at::Tensor());
  }
  static at::Tensor& inplace(at::Tensor& self) {
    if (!supported(self)) {
      static auto op = findOp((std::string("aten::") + name + "_").c_str(), "");
      fallbackCall<at::Tensor>(op, self);
      return self;
    }
    unary(Op, self, self);
    return self;
  }
  static at::Tensor& out(const at::Tensor& self, at::Tensor& out) {
    if (!supported(self, out)) {
      static auto op = findOp((std::string("aten::") + name).c_str(), "out");
      fallbackCall<at::Tensor>(op, self, out);
      return out;
    }
    unary(Op, self, out);
    return out;
  }
};

#define ACCEL_UNARY_NAME(OP, NAME) \
  template <>                      \
  const char* Forms<UnaryOp::OP>::name = NAME;
ACCEL_UNARY_NAME(Neg, "neg")
ACCEL_UNARY_NAME(Abs, "abs")
ACCEL_UNARY_NAME(Sign, "sign")
ACCEL_UNARY_NAME(Relu, "relu")
ACCEL_UNARY_NAME(BitwiseNot, "bitwise_not")
ACCEL_UNARY_NAME(LogicalNot, "logical_not")
ACCEL_UNARY_NAME(IsNan, "isnan")
ACCEL_UNARY_NAME(Exp, "exp")
ACCEL_UNARY_NAME(Exp2, "exp2")
ACCEL_UNARY_NAME(Expm1, "expm1")
ACCEL_UNARY_NAME(Log, "log")
ACCEL_UNARY_NAME(Log1p, "log1p")
ACCEL_UNARY_NAME(Log2, "log2")
ACCEL_UNARY_NAME(Sqrt, "sqrt")
ACCEL_UNARY_NAME(Rsqrt, "rsqrt")
ACCEL_UNARY_NAME(Reciprocal, "reciprocal")
ACCEL_UNARY_NAME(Sin, "sin")
ACCEL_UNARY_NAME(Cos, "cos")
ACCEL_UNARY_NAME(Tanh, "tanh")
ACCEL_UNARY_NAME(Sigmoid, "sigmoid")
ACCEL_UNARY_NAME(Erf, "erf")
ACCEL_UNARY_NAME(Floor, "floor")
ACCEL_UNARY_NAME(Ceil, "ceil")
ACCEL_UNARY_NAME(Round, "round")
ACCEL_UNARY_NAME(Trunc, "trunc")
ACCEL_UNARY_NAME(Silu, "silu")
#undef ACCEL_UNARY_NAME

UnaryOp geluOp(c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh",
              "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu;
}

at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  return unary(geluOp(approximate), self, at::Tensor());
}
at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  unary(geluOp(approximate), self, self);
  return self;
}
at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  unary(geluOp(approximate), self, out);
  return out;
}

UnaryParams clampParams(const c10::optional<c10::Scalar>& min,
                        const c10::optional<c10::Scalar>& max) {
  TORCH_CHECK(min.has_value() || max.has_value(),
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  UnaryParams p;
  if (min) p.a = toKernelScalar(*min), p.has_a = true;
  if (max) p.b = toKernelScalar(*max), p.has_b = true;
  return p;
}

// clamp with Scalar bounds computes in result_type(self, bounds), like PyTorch.
c10::ScalarType clampType(const at::Tensor& self, const c10::optional<c10::Scalar>& min,
                          const c10::optional<c10::Scalar>& max) {
  at::native::ResultTypeState state{};
  state = at::native::update_result_type_state(self, state);
  if (min) state = at::native::update_result_type_state(*min, state);
  if (max) state = at::native::update_result_type_state(*max, state);
  return at::native::result_type(state);
}

// Into `out`, or a new tensor when `out` is undefined; returns the result.
at::Tensor clampInto(const at::Tensor& self, const c10::optional<c10::Scalar>& min,
                     const c10::optional<c10::Scalar>& max, const at::Tensor& out) {
  const UnaryParams p = clampParams(min, max);
  const c10::ScalarType t = clampType(self, min, max);
  at::Tensor input = asComputeInput(self, t, self.device());
  return runElementwise(out, t, {input}, [&p](const kernels::ElementwiseDesc& d, rt::Stream s) {
    return kernels::unaryTable().unary(UnaryOp::Clamp, d, p, s);
  });
}

at::Tensor clamp(const at::Tensor& self, const c10::optional<c10::Scalar>& min,
                 const c10::optional<c10::Scalar>& max) {
  return clampInto(self, min, max, at::Tensor());
}
at::Tensor& clamp_out(const at::Tensor& self, const c10::optional<c10::Scalar>& min,
                      const c10::optional<c10::Scalar>& max, at::Tensor& out) {
  clampInto(self, min, max, out);
  return out;
}
at::Tensor& clamp_(at::Tensor& self, const c10::optional<c10::Scalar>& min,
                   const c10::optional<c10::Scalar>& max) {
  return clamp_out(self, min, max, self);
}
at::Tensor clamp_min(const at::Tensor& self, const c10::Scalar& min) {
  return clamp(self, min, c10::nullopt);
}
at::Tensor& clamp_min_(at::Tensor& self, const c10::Scalar& min) {
  return clamp_out(self, min, c10::nullopt, self);
}
at::Tensor& clamp_min_out(const at::Tensor& self, const c10::Scalar& min, at::Tensor& out) {
  return clamp_out(self, min, c10::nullopt, out);
}
at::Tensor clamp_max(const at::Tensor& self, const c10::Scalar& max) {
  return clamp(self, c10::nullopt, max);
}
at::Tensor& clamp_max_(at::Tensor& self, const c10::Scalar& max) {
  return clamp_out(self, c10::nullopt, max, self);
}
at::Tensor& clamp_max_out(const at::Tensor& self, const c10::Scalar& max, at::Tensor& out) {
  return clamp_out(self, c10::nullopt, max, out);
}

// nan_to_num's defaults: 0 for NaN and the dtype's finite extremes for the infinities.
UnaryParams nanToNumParams(c10::ScalarType t, c10::optional<double> nan,
                           c10::optional<double> posinf, c10::optional<double> neginf) {
  double hi = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "nan_to_num", [&] {
    hi = static_cast<double>(std::numeric_limits<scalar_t>::max());
  });
  UnaryParams p;
  p.a = toKernelScalar(nan.value_or(0.0));
  p.b = toKernelScalar(posinf.value_or(hi));
  p.c = toKernelScalar(neginf.value_or(-hi));
  return p;
}

at::Tensor& nan_to_num_out(const at::Tensor& self, c10::optional<double> nan,
                           c10::optional<double> posinf, c10::optional<double> neginf,
                           at::Tensor& out) {
  if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)) {
    runElementwise(out, self.scalar_type(), {self},
                   [](const kernels::ElementwiseDesc& d, rt::Stream s) {
                     return kernels::copyTable().copy(d, s);
                   });
    return out;
  }
  const UnaryParams p = nanToNumParams(self.scalar_type(), nan, posinf, neginf);
  runElementwise(out, self.scalar_type(), {self},
                 [&p](const kernels::ElementwiseDesc& d, rt::Stream s) {
                   return kernels::unaryTable().unary(UnaryOp::NanToNum, d, p, s);
                 });
  return out;
}
at::Tensor nan_to_num(const at::Tensor& self, c10::optional<double> nan,
                      c10::optional<double> posinf, c10::optional<double> neginf) {
  at::Tensor out = at::empty_like(self);
  return nan_to_num_out(self, nan, posinf, neginf, out);
}
at::Tensor& nan_to_num_(at::Tensor& self, c10::optional<double> nan,
                        c10::optional<double> posinf, c10::optional<double> neginf) {
  return nan_to_num_out(self, nan, posinf, neginf, self);
}

at::Tensor softplusInto(const at::Tensor& self, const c10::Scalar& beta,
                        const c10::Scalar& threshold, const at::Tensor& out) {
  UnaryParams p;
  p.a = toKernelScalar(beta);
  p.b = toKernelScalar(threshold);
  return runElementwise(out, self.scalar_type(), {self},
                        [&p](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::unaryTable().unary(UnaryOp::Softplus, d, p, s);
                        });
}
at::Tensor softplus(const at::Tensor& self, const c10::Scalar& beta,
                    const c10::Scalar& threshold) {
  return softplusInto(self, beta, threshold, at::Tensor());
}
at::Tensor& softplus_out(const at::Tensor& self, const c10::Scalar& beta,
                         const c10::Scalar& threshold, at::Tensor& out) {
  softplusInto(self, beta, threshold, out);
  return out;
}

#define ACCEL_REGISTER_UNARY(OP, NAME)                  \
  m.impl(NAME, Forms<UnaryOp::OP>::functional);          \
  m.impl(NAME "_", Forms<UnaryOp::OP>::inplace);         \
  m.impl(NAME ".out", Forms<UnaryOp::OP>::out);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  ACCEL_REGISTER_UNARY(Neg, "neg")
  ACCEL_REGISTER_UNARY(Abs, "abs")
  ACCEL_REGISTER_UNARY(Sign, "sign")
  ACCEL_REGISTER_UNARY(BitwiseNot, "bitwise_not")
  ACCEL_REGISTER_UNARY(LogicalNot, "logical_not")
  ACCEL_REGISTER_UNARY(Exp, "exp")
  ACCEL_REGISTER_UNARY(Exp2, "exp2")
  ACCEL_REGISTER_UNARY(Expm1, "expm1")
  ACCEL_REGISTER_UNARY(Log, "log")
  ACCEL_REGISTER_UNARY(Log1p, "log1p")
  ACCEL_REGISTER_UNARY(Log2, "log2")
  ACCEL_REGISTER_UNARY(Sqrt, "sqrt")
  ACCEL_REGISTER_UNARY(Rsqrt, "rsqrt")
  ACCEL_REGISTER_UNARY(Reciprocal, "reciprocal")
  ACCEL_REGISTER_UNARY(Sin, "sin")
  ACCEL_REGISTER_UNARY(Cos, "cos")
  ACCEL_REGISTER_UNARY(Tanh, "tanh")
  ACCEL_REGISTER_UNARY(Sigmoid, "sigmoid")
  ACCEL_REGISTER_UNARY(Erf, "erf")
  ACCEL_REGISTER_UNARY(Floor, "floor")
  ACCEL_REGISTER_UNARY(Ceil, "ceil")
  ACCEL_REGISTER_UNARY(Round, "round")
  ACCEL_REGISTER_UNARY(Trunc, "trunc")
  ACCEL_REGISTER_UNARY(Silu, "silu")
  m.impl("relu", Forms<UnaryOp::Relu>::functional);
  m.impl("relu_", Forms<UnaryOp::Relu>::inplace);
  m.impl("isnan", Forms<UnaryOp::IsNan>::functional);
  m.impl("gelu", gelu);
  m.impl("gelu_", gelu_);
  m.impl("gelu.out", gelu_out);
  m.impl("clamp", clamp);
  m.impl("clamp_", clamp_);
  m.impl("clamp.out", clamp_out);
  m.impl("clamp_min", clamp_min);
  m.impl("clamp_min_", clamp_min_);
  m.impl("clamp_min.out", clamp_min_out);
  m.impl("clamp_max", clamp_max);
  m.impl("clamp_max_", clamp_max_);
  m.impl("clamp_max.out", clamp_max_out);
  m.impl("nan_to_num", nan_to_num);
  m.impl("nan_to_num_", nan_to_num_);
  m.impl("nan_to_num.out", nan_to_num_out);
  m.impl("softplus", softplus);
  m.impl("softplus.out", softplus_out);
}

}  // namespace
}  // namespace accel
