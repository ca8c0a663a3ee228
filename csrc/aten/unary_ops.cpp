// Unary math, activations, clamp (Scalar bounds) and nan_to_num: functional, in-place and out=
// forms. Integer inputs of float ops compute in the default float dtype, as in PyTorch.
#include <ATen/Dispatch.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <limits>
#include <optional>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/op_forms.h"
#include "kernels/copy.h"
#include "kernels/unary.h"

namespace accel {
namespace {

using kernels::UnaryOp;
using kernels::UnaryParams;

enum class Kind { Float, Same, Predicate, Rounding };

Kind kindOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Sign:
    case UnaryOp::Relu:
    case UnaryOp::BitwiseNot:
    case UnaryOp::Clamp:
    case UnaryOp::Conj:
    case UnaryOp::Sgn: return Kind::Same;
    case UnaryOp::LogicalNot:
    case UnaryOp::IsNan:
    case UnaryOp::IsFinite:
    case UnaryOp::Signbit: return Kind::Predicate;
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc: return Kind::Rounding;
    default: return Kind::Float;
  }
}

at::Tensor copyInto(const at::Tensor& out, const at::Tensor& self) {
  return runElementwise(out, self.scalar_type(), {self},
                        [](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::copyTable().copy(d, s);
                        });
}

// out = op(self); `out` undefined for the functional form.
at::Tensor unary(UnaryOp op, const at::Tensor& self, const at::Tensor& out,
                 const UnaryParams& p = {}) {
  const c10::ScalarType in = self.scalar_type();
  TORCH_CHECK(!(op == UnaryOp::Neg && in == c10::kBool),
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
              "to invert a mask, use the `~` or `logical_not()` operator instead.");
  const bool complex = c10::isComplexType(in);
  // On real values conj is the identity and sgn is sign.
  if (op == UnaryOp::Conj && !complex) return out.is_same(self) ? out : copyInto(out, self);
  if (op == UnaryOp::Sgn && !complex) op = UnaryOp::Sign;
  const Kind kind = kindOf(op);
  c10::ScalarType compute = kind == Kind::Float ? floatingOf(in) : in;
  c10::ScalarType result = kind == Kind::Predicate ? c10::kBool : compute;
  if (complex && kernels::complexUnaryResult(op) == kernels::ComplexResult::Real)
    result = c10::toRealValueType(in);
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

bool nativeInput(const at::Tensor& self) { return kernelSupports(self.scalar_type()); }

// Complex inputs: the ops the complex kernels define (complex32: those CPU has for it).
bool nativeUnary(UnaryOp op, const at::Tensor& self) {
  const c10::ScalarType t = self.scalar_type();
  // CPU refuses abs and relu of bool: the fallback raises its error.
  if (t == c10::kBool && (op == UnaryOp::Abs || op == UnaryOp::Relu || op == UnaryOp::Signbit))
    return false;
  // CPU has no integer frac or round(decimals): the fallback raises its error.
  if (c10::isIntegralType(t, /*includeBool=*/true) &&
      (op == UnaryOp::Frac || op == UnaryOp::RoundDecimals))
    return false;
  if (!kernelSupportsComplex(t)) return nativeInput(self);
  if (kernels::complexUnaryResult(op) == kernels::ComplexResult::None) return false;
  return t != c10::kComplexHalf || op == UnaryOp::Neg || op == UnaryOp::Conj ||
         op == UnaryOp::IsNan;
}

template <UnaryOp Op>
struct Unary {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& self) { return nativeUnary(Op, self); }
  static at::Tensor compute(const at::Tensor& self, const Output& out) {
    TORCH_CHECK(!(Op == UnaryOp::Abs && self.is_complex() && out.form() == Output::Form::InPlace),
                "In-place abs is not supported for complex tensors.");
    return unary(Op, self, out.tensor());
  }
};

// polygamma(n, x): n is the first argument (its in-place form, polygamma_(x, n), is composite).
struct Polygamma {
  static bool native(int64_t n, const at::Tensor& self) {
    return n >= 0 && nativeUnary(UnaryOp::Polygamma, self);
  }
  static at::Tensor compute(int64_t n, const at::Tensor& self, const Output& out) {
    UnaryParams p;
    p.a = toKernelScalar(n);
    return unary(UnaryOp::Polygamma, self, out.tensor(), p);
  }
};

// round(x, decimals=d); d == 0 is plain round.
struct RoundDecimals {
  static bool native(const at::Tensor& self, int64_t) {
    return nativeUnary(UnaryOp::RoundDecimals, self);
  }
  static at::Tensor compute(const at::Tensor& self, int64_t decimals, const Output& out) {
    if (decimals == 0) return unary(UnaryOp::Round, self, out.tensor());
    UnaryParams p;
    p.a = toKernelScalar(decimals);
    return unary(UnaryOp::RoundDecimals, self, out.tensor(), p);
  }
};

// logit(x, eps): x clamped to [eps, 1 - eps] first, when eps is given and not negative.
// Half and bfloat16 compute in float and round once (CPU rounds the clamp and the quotient
// each in the dtype, farther from the exact value).
struct Logit {
  static bool native(const at::Tensor& self, std::optional<double>) {
    return nativeUnary(UnaryOp::Logit, self);
  }
  static at::Tensor compute(const at::Tensor& self, std::optional<double> eps, const Output& out) {
    UnaryParams p;
    if (eps && *eps >= 0) p.a = toKernelScalar(*eps), p.has_a = true;
    return unary(UnaryOp::Logit, self, out.tensor(), p);
  }
};

// The special functions CPU has in float and double only (integers promote to float).
template <UnaryOp Op>
struct UnaryNoReduced : Unary<Op> {
  static bool native(const at::Tensor& self) {
    const c10::ScalarType t = self.scalar_type();
    return t != c10::kHalf && t != c10::kBFloat16 && Unary<Op>::native(self);
  }
};

UnaryOp geluOp(c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh",
              "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu;
}

struct Gelu {
  static bool native(const at::Tensor& self, c10::string_view) { return nativeInput(self); }
  static at::Tensor compute(const at::Tensor& self, c10::string_view approximate,
                            const Output& out) {
    return unary(geluOp(approximate), self, out.tensor());
  }
};

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

bool nativeBound(const c10::optional<c10::Scalar>& bound) { return !bound || !bound->isComplex(); }

struct Clamp {
  static bool native(const at::Tensor& self, const c10::optional<c10::Scalar>& min,
                     const c10::optional<c10::Scalar>& max) {
    return nativeInput(self) && nativeBound(min) && nativeBound(max);
  }
  static at::Tensor compute(const at::Tensor& self, const c10::optional<c10::Scalar>& min,
                            const c10::optional<c10::Scalar>& max, const Output& out) {
    return clampInto(self, min, max, out.tensor());
  }
};

// clamp_min / clamp_max: one Scalar bound.
template <bool IsMin>
struct ClampBound {
  static bool native(const at::Tensor& self, const c10::Scalar& bound) {
    return nativeInput(self) && !bound.isComplex();
  }
  static at::Tensor compute(const at::Tensor& self, const c10::Scalar& bound, const Output& out) {
    return IsMin ? clampInto(self, bound, c10::nullopt, out.tensor())
                 : clampInto(self, c10::nullopt, bound, out.tensor());
  }
};

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

struct NanToNum {
  static bool native(const at::Tensor& self, c10::optional<double>, c10::optional<double>,
                     c10::optional<double>) {
    return nativeInput(self);
  }
  static at::Tensor compute(const at::Tensor& self, c10::optional<double> nan,
                            c10::optional<double> posinf, c10::optional<double> neginf,
                            const Output& out) {
    if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)) {
      return runElementwise(out.tensor(), self.scalar_type(), {self},
                            [](const kernels::ElementwiseDesc& d, rt::Stream s) {
                              return kernels::copyTable().copy(d, s);
                            });
    }
    const UnaryParams p = nanToNumParams(self.scalar_type(), nan, posinf, neginf);
    return runElementwise(out.tensor(), self.scalar_type(), {self},
                          [&p](const kernels::ElementwiseDesc& d, rt::Stream s) {
                            return kernels::unaryTable().unary(UnaryOp::NanToNum, d, p, s);
                          });
  }
};

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
struct Softplus {
  static bool native(const at::Tensor& self, const c10::Scalar& beta, const c10::Scalar& th) {
    return nativeInput(self) && !beta.isComplex() && !th.isComplex();
  }
  static at::Tensor compute(const at::Tensor& self, const c10::Scalar& beta,
                            const c10::Scalar& threshold, const Output& out) {
    return softplusInto(self, beta, threshold, out.tensor());
  }
};

#define ACCEL_REGISTER_UNARY(OP, NAME) \
  registerForms<Unary<UnaryOp::OP>>(m, NAME, NAME "_", NAME ".out");

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
  ACCEL_REGISTER_UNARY(Sinh, "sinh")
  ACCEL_REGISTER_UNARY(Cosh, "cosh")
  ACCEL_REGISTER_UNARY(Tan, "tan")
  ACCEL_REGISTER_UNARY(Log10, "log10")
  ACCEL_REGISTER_UNARY(Sigmoid, "sigmoid")
  ACCEL_REGISTER_UNARY(Erf, "erf")
  ACCEL_REGISTER_UNARY(Floor, "floor")
  ACCEL_REGISTER_UNARY(Ceil, "ceil")
  ACCEL_REGISTER_UNARY(Round, "round")
  ACCEL_REGISTER_UNARY(Trunc, "trunc")
  ACCEL_REGISTER_UNARY(Silu, "silu")
  ACCEL_REGISTER_UNARY(Sgn, "sgn")
  ACCEL_REGISTER_UNARY(Acos, "acos")
  ACCEL_REGISTER_UNARY(Asin, "asin")
  ACCEL_REGISTER_UNARY(Atan, "atan")
  ACCEL_REGISTER_UNARY(Acosh, "acosh")
  ACCEL_REGISTER_UNARY(Asinh, "asinh")
  ACCEL_REGISTER_UNARY(Atanh, "atanh")
  ACCEL_REGISTER_UNARY(Erfc, "erfc")
  ACCEL_REGISTER_UNARY(Erfinv, "erfinv")
  ACCEL_REGISTER_UNARY(Lgamma, "lgamma")
  ACCEL_REGISTER_UNARY(Digamma, "digamma")
  ACCEL_REGISTER_UNARY(I0, "i0")
  ACCEL_REGISTER_UNARY(Frac, "frac")
  ACCEL_REGISTER_UNARY(Sinc, "sinc")
  registerForms<Unary<UnaryOp::Signbit>>(m, "signbit", nullptr, "signbit.out");
  registerForms<Polygamma>(m, "polygamma", nullptr, "polygamma.out");
  registerForms<RoundDecimals>(m, "round.decimals", "round_.decimals", "round.decimals_out");
  registerForms<Logit>(m, "logit", "logit_", "logit.out");
#define ACCEL_REGISTER_SPECIAL(OP, NAME) \
  registerForms<OP>(m, "special_" NAME, nullptr, "special_" NAME ".out");
  ACCEL_REGISTER_SPECIAL(Unary<UnaryOp::I0e>, "i0e")
  ACCEL_REGISTER_SPECIAL(Unary<UnaryOp::I1>, "i1")
  ACCEL_REGISTER_SPECIAL(Unary<UnaryOp::I1e>, "i1e")
  ACCEL_REGISTER_SPECIAL(Unary<UnaryOp::Entr>, "entr")
  // The modified Bessel functions of the first kind are i0 and i1.
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::I0>, "modified_bessel_i0")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::I1>, "modified_bessel_i1")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::BesselJ0>, "bessel_j0")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::BesselJ1>, "bessel_j1")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::BesselY0>, "bessel_y0")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::BesselY1>, "bessel_y1")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::SphericalBesselJ0>, "spherical_bessel_j0")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::Erfcx>, "erfcx")
  ACCEL_REGISTER_SPECIAL(UnaryNoReduced<UnaryOp::LogNdtr>, "log_ndtr")
#undef ACCEL_REGISTER_SPECIAL
  registerForms<Unary<UnaryOp::Angle>>(m, "angle", nullptr, "angle.out");
  registerForms<Unary<UnaryOp::Conj>>(m, nullptr, "conj_physical_", "conj_physical.out");
  registerForms<Unary<UnaryOp::Relu>>(m, "relu", "relu_", nullptr);
  registerForms<Unary<UnaryOp::IsNan>>(m, "isnan", nullptr, nullptr);
  registerForms<Gelu>(m, "gelu", "gelu_", "gelu.out");
  registerForms<Clamp>(m, "clamp", "clamp_", "clamp.out");
  registerForms<ClampBound<true>>(m, "clamp_min", "clamp_min_", "clamp_min.out");
  registerForms<ClampBound<false>>(m, "clamp_max", "clamp_max_", "clamp_max.out");
  registerForms<NanToNum>(m, "nan_to_num", "nan_to_num_", "nan_to_num.out");
  registerForms<Softplus>(m, "softplus", nullptr, "softplus.out");
}

}  // namespace
}  // namespace accel
