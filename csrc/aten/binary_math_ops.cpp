// Binary ops beyond add/sub/mul/div: div with a rounding mode, pow, maximum/minimum, fmax/fmin,
// remainder/fmod, atan2, copysign, heaviside, nextafter, logaddexp(2), gcd/lcm, bitwise
// and/or/xor and the shifts, xlogy, xlog1py, zeta, igamma/igammac, the orthogonal polynomials
// of torch.special, the activations' backward and the Gamma sample's gradient. Inputs are
// converted to the result dtype first (the kernels take one dtype); a Python scalar rhs is
// passed by value, a Python scalar lhs is filled on the device.
#include <ATen/ExpandUtils.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/log.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/TensorOperators.h>
#include <torch/library.h>

#include <type_traits>
#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/op_forms.h"
#include "kernels/binary.h"
#include "kernels/copy.h"

namespace accel {
namespace {

using kernels::BinaryOp;

at::Tensor binaryTyped(BinaryOp op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out,
                       c10::ScalarType t, const c10::Scalar& arg = 0) {
  const c10::Device device = commonDevice({a, b}, "binary op");
  const kernels::Scalar karg = toKernelScalar(arg);
  if (isHostScalar(b) && !isHostScalar(a) && op != BinaryOp::ThresholdBackward &&
      op != BinaryOp::Lerp) {
    const kernels::Scalar rhs = toKernelScalar(b.item());
    at::Tensor x = asComputeInput(a, t, device);
    return runElementwise(out, t, {x}, [op, rhs](const kernels::ElementwiseDesc& d, rt::Stream s) {
      return kernels::binaryTable().binary_scalar(op, d, rhs, s);
    });
  }
  at::Tensor x = asComputeInput(a, t, device), y = asComputeInput(b, t, device);
  return runElementwise(out, t, {x, y},
                        [op, karg](const kernels::ElementwiseDesc& d, rt::Stream s) {
                          return kernels::binaryTable().binary(op, d, karg, s);
                        });
}

// Python numbers become wrapped scalars, as PyTorch's Scalar overloads do.
at::Tensor asTensor(const at::Tensor& t) { return t; }
at::Tensor asTensor(const c10::Scalar& s) { return wrappedScalar(s); }

template <class A, class B>
bool nativeTypes(const A& a, const B& b) {
  auto ok = [](const auto& x) {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, c10::Scalar>) {
      return !x.isComplex();
    } else {
      return kernelSupports(x.scalar_type());
    }
  };
  return ok(a) && ok(b) && kernelSupports(at::result_type(a, b));
}

// The result dtype: result_type, made floating for atan2; hypot needs floating inputs and the
// bitwise ops integral ones.
bool isPolynomial(BinaryOp op) {
  return static_cast<int>(op) >= static_cast<int>(BinaryOp::ChebyshevT) &&
         static_cast<int>(op) <= static_cast<int>(BinaryOp::LegendreP);
}

c10::ScalarType typeOf(kernels::BinaryOp op, const at::Tensor& a, const at::Tensor& b) {
  c10::ScalarType t = at::result_type(a, b);
  if (op == BinaryOp::Atan2 || op == BinaryOp::Copysign || op == BinaryOp::Xlog1py ||
      op == BinaryOp::Zeta || isPolynomial(op))
    t = floatingOf(t);
  if (op == BinaryOp::Hypot) {  // as CPU: no integer kernel, no promotion
    TORCH_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(t), "\"hypot_cpu\" not implemented for '", t,
                                "'");
  }
  if (op == BinaryOp::BitwiseAnd || op == BinaryOp::BitwiseOr || op == BinaryOp::BitwiseXor)
    TORCH_CHECK(c10::isIntegralType(t, /*includeBool=*/true),
                "\"bitwise_cpu\" not implemented for '", t, "'");
  return t;
}

// Whether the kernels define `op` for these operands; otherwise the fallback runs it (and
// raises CPU's error where CPU has no kernel either).
template <class A, class B>
bool defined(BinaryOp op, const A& a, const B& b) {
  const c10::ScalarType t = at::result_type(a, b);
  if (op == BinaryOp::Zeta || isPolynomial(op)) {  // CPU: float and double only
    const c10::ScalarType f = floatingOf(t);
    // A float32 H_n(x) of high degree rounds differently from CPU's (contracted) recurrence
    // beyond float32's tolerance: CPU's kernel.
    if (op == BinaryOp::HermiteH && t == c10::kFloat) return false;
    return f == c10::kFloat || f == c10::kDouble;
  }
  switch (op) {
    case BinaryOp::Gcd:
    case BinaryOp::Lcm:
    case BinaryOp::ShiftLeft:
    case BinaryOp::ShiftRight: return c10::isIntegralType(t, /*includeBool=*/false);
    case BinaryOp::LogAddExp:
    case BinaryOp::LogAddExp2: return c10::isFloatingType(t);
    case BinaryOp::NextAfter: return t == c10::kFloat || t == c10::kDouble;
    case BinaryOp::Igamma:
    case BinaryOp::Igammac: return c10::isFloatingType(t);  // CPU: no integer kernel
    case BinaryOp::Heaviside: {                             // CPU refuses mixed dtypes
      if constexpr (std::is_same_v<A, at::Tensor> && std::is_same_v<B, at::Tensor>)
        return a.scalar_type() == b.scalar_type();
      return false;
    }
    default: return true;
  }
}

// An op computed in its result dtype, over Tensor (or Scalar) operands A and B.
template <BinaryOp Op, class A = at::Tensor, class B = at::Tensor>
struct Math {
  static bool native(const A& a, const B& b) { return nativeTypes(a, b) && defined(Op, a, b); }
  static at::Tensor compute(const A& a, const B& b, const Output& out) {
    const at::Tensor x = asTensor(a), y = asTensor(b);
    return binaryTyped(Op, x, y, out.tensor(), typeOf(Op, x, y));
  }
};

// The exponents CPU and CUDA compute without pow: 1 is a copy, 2 and 3 are products, -2 the
// reciprocal of x * x, 0.5, -0.5 and -1 are sqrt, rsqrt and reciprocal. The same bits, at a
// multiply's cost (RMSNorm's forward and the backward of pow and rsqrt take these).
// CPU's half kernel has no products beyond the square, so it keeps pow for 3 and -2.
// Returns an undefined tensor for any other exponent.
at::Tensor powWithoutPow(const at::Tensor& a, double p, const at::Tensor& out, c10::ScalarType t) {
  at::Tensor o = out;
  auto square = [&](const at::Tensor& dst) { return binaryTyped(BinaryOp::Mul, a, a, dst, t); };
  auto unaryOp = [&](auto functional, auto into) {
    return o.defined() ? into(o, a) : functional(a);
  };
  if (p == 2) return square(out);
  if (!c10::isFloatingType(t)) return at::Tensor();
  const bool products = t != c10::kHalf;
  if (p == 1) {
    if (o.is_same(a)) return o;
    return runElementwise(out, t, {a}, [](const kernels::ElementwiseDesc& d, rt::Stream s) {
      return kernels::copyTable().copy(d, s);
    });
  }
  if (p == 3 && products) return binaryTyped(BinaryOp::Mul, square(at::Tensor()), a, out, t);
  if (p == -2 && products) {
    const at::Tensor sq = square(at::Tensor());
    return o.defined() ? at::reciprocal_out(o, sq) : at::reciprocal(sq);
  }
  if (p == 0.5) return unaryOp(at::sqrt, at::sqrt_out);
  if (p == -0.5) return unaryOp(at::rsqrt, at::rsqrt_out);
  if (p == -1) return unaryOp(at::reciprocal, at::reciprocal_out);
  return at::Tensor();
}

// pow(tensor, scalar). A complex base takes only the exponent 2 natively, as z * z.
struct PowScalar {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& a, const c10::Scalar& e) {
    if (nativeTypes(a, e)) return true;
    const c10::ScalarType t = a.scalar_type();
    return kernelSupportsComplex(t) && t != c10::kComplexHalf && e.equal(2);
  }
  static at::Tensor compute(const at::Tensor& a, const c10::Scalar& e, const Output& out) {
    if (a.is_complex()) return binaryTyped(BinaryOp::Mul, a, a, out.tensor(), a.scalar_type());
    const at::Tensor y = asTensor(e);
    const c10::ScalarType t = typeOf(BinaryOp::Pow, a, y);
    if (!e.isBoolean() && t == a.scalar_type()) {
      at::Tensor r = powWithoutPow(a, e.toDouble(), out.tensor(), t);
      if (r.defined()) return r;
    }
    return binaryTyped(BinaryOp::Pow, a, y, out.tensor(), t);
  }
};

// --- div with rounding_mode -------------------------------------------------------------
struct DivMode {
  static bool native(const at::Tensor& a, const at::Tensor& b, c10::optional<c10::string_view>) {
    return nativeTypes(a, b);
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b,
                            c10::optional<c10::string_view> mode, const Output& out) {
    if (!mode) {
      if (out.form() == Output::Form::Functional) return at::div(a, b);
      at::Tensor target = out.tensor();
      return at::div_out(target, a, b);
    }
    TORCH_CHECK(*mode == "trunc" || *mode == "floor",
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                *mode, "'");
    return binaryTyped(*mode == "trunc" ? BinaryOp::DivTrunc : BinaryOp::DivFloor, a, b,
                       out.tensor(), at::result_type(a, b));
  }
};

// --- xlogy: x * log(y), 0 where x is 0 unless y is nan (CPU's rule), composed of native ops.
// ATen's scalar forms call this one with the scalar wrapped.
struct Xlogy {
  static bool native(const at::Tensor& a, const at::Tensor& b) {
    return nativeTypes(a, b) && kernelSupports(floatingOf(at::result_type(a, b)));
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const Output& out) {
    const c10::Device device = commonDevice({a, b}, "xlogy");
    const c10::ScalarType t = floatingOf(at::result_type(a, b));
    const at::Tensor x = asComputeInput(a, t, device), y = asComputeInput(b, t, device);
    const at::Tensor zero_x = at::logical_and(x == 0, y == y);
    const at::Tensor zero = at::zeros({}, x.options()), xlogy = x * at::log(y);
    if (out.form() == Output::Form::Functional) return at::where(zero_x, zero, xlogy);
    at::Tensor target = out.tensor();
    // where_out resizes; in place, self must have the broadcast shape (TensorIterator's check).
    if (out.form() == Output::Form::InPlace) {
      const std::vector<int64_t> shape = at::infer_size(a.sizes(), b.sizes());
      TORCH_CHECK(target.sizes().equals(shape), "output with shape ", target.sizes(),
                  " doesn't match the broadcast shape ", c10::IntArrayRef(shape));
    }
    return at::where_out(target, zero_x, zero, xlogy);
  }
};

// --- _standard_gamma_grad(alpha, sample): Gamma rsample's backward --------------------------
// Native for one shape and one dtype (autograd's call); other calls keep CPU's kernel, which
// broadcasts and refuses mixed dtypes.
struct StandardGammaGrad {
  static bool native(const at::Tensor& alpha, const at::Tensor& sample) {
    const c10::ScalarType t = alpha.scalar_type();
    return (t == c10::kFloat || t == c10::kDouble) && sample.scalar_type() == t &&
           alpha.sizes() == sample.sizes() && nativeTypes(alpha, sample);
  }
  static at::Tensor compute(const at::Tensor& alpha, const at::Tensor& sample) {
    return binaryTyped(BinaryOp::StandardGammaGrad, alpha, sample, at::Tensor(),
                       alpha.scalar_type());
  }
};

// --- activations' backward: (grad, forward input or output) ------------------------------
template <BinaryOp Op>
struct Backward {
  static bool native(const at::Tensor& g, const at::Tensor& x) { return nativeTypes(g, x); }
  static at::Tensor compute(const at::Tensor& g, const at::Tensor& x, const Output& out) {
    return binaryTyped(Op, g, x, out.tensor(), at::result_type(g, x));
  }
};

struct GeluBackward {
  static bool native(const at::Tensor& g, const at::Tensor& x, c10::string_view) {
    return nativeTypes(g, x);
  }
  static at::Tensor compute(const at::Tensor& g, const at::Tensor& x, c10::string_view approximate,
                            const Output& out) {
    const BinaryOp op = approximate == "tanh" ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward;
    return binaryTyped(op, g, x, out.tensor(), at::result_type(g, x));
  }
};

struct ThresholdBackward {
  static bool native(const at::Tensor& g, const at::Tensor& x, const c10::Scalar& th) {
    return nativeTypes(g, x) && !th.isComplex();
  }
  static at::Tensor compute(const at::Tensor& g, const at::Tensor& x, const c10::Scalar& th,
                            const Output& out) {
    return binaryTyped(BinaryOp::ThresholdBackward, g, x, out.tensor(), at::result_type(g, x), th);
  }
};

using c10::Scalar;
using Tensor = at::Tensor;

#define ACCEL_REGISTER_BITWISE(OP, NAME)      \
  registerForms<Math<BinaryOp::Bitwise##OP>>( \
      m, "bitwise_" NAME ".Tensor", "bitwise_" NAME "_.Tensor", "bitwise_" NAME ".Tensor_out");

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<DivMode>(m, "div.Tensor_mode", "div_.Tensor_mode", "div.out_mode");
  // floor_divide is division rounded down (not C++'s truncation), as Python's //.
  registerForms<Math<BinaryOp::DivFloor>>(m, "floor_divide", "floor_divide_.Tensor",
                                          "floor_divide.out");
  registerForms<Math<BinaryOp::Pow>>(m, "pow.Tensor_Tensor", "pow_.Tensor",
                                     "pow.Tensor_Tensor_out");
  registerForms<PowScalar>(m, "pow.Tensor_Scalar", "pow_.Scalar", "pow.Tensor_Scalar_out");
  registerForms<Math<BinaryOp::Pow, Scalar, Tensor>>(m, "pow.Scalar", nullptr, "pow.Scalar_out");
  registerForms<Math<BinaryOp::Maximum>>(m, "maximum", nullptr, "maximum.out");
  registerForms<Math<BinaryOp::Minimum>>(m, "minimum", nullptr, "minimum.out");
  registerForms<Math<BinaryOp::Remainder>>(m, "remainder.Tensor", "remainder_.Tensor",
                                           "remainder.Tensor_out");
  registerForms<Math<BinaryOp::Remainder, Tensor, Scalar>>(m, "remainder.Scalar", nullptr, nullptr);
  registerForms<Math<BinaryOp::Fmod>>(m, "fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out");
  registerForms<Math<BinaryOp::Fmod, Tensor, Scalar>>(m, "fmod.Scalar", nullptr, nullptr);
  registerForms<Math<BinaryOp::Atan2>>(m, "atan2", "atan2_", "atan2.out");
  registerForms<Math<BinaryOp::Hypot>>(m, "hypot", "hypot_", "hypot.out");
  registerForms<Xlogy>(m, "xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor");
  ACCEL_REGISTER_BITWISE(And, "and")
  ACCEL_REGISTER_BITWISE(Or, "or")
  ACCEL_REGISTER_BITWISE(Xor, "xor")
  registerForms<Math<BinaryOp::ShiftLeft>>(m, "bitwise_left_shift.Tensor",
                                           "bitwise_left_shift_.Tensor",
                                           "bitwise_left_shift.Tensor_out");
  registerForms<Math<BinaryOp::ShiftRight>>(m, "bitwise_right_shift.Tensor",
                                            "bitwise_right_shift_.Tensor",
                                            "bitwise_right_shift.Tensor_out");
  // The operators << and >> are the same kernels (with Scalar forms of their own).
  registerForms<Math<BinaryOp::ShiftLeft>>(m, "__lshift__.Tensor", "__ilshift__.Tensor", nullptr);
  registerForms<Math<BinaryOp::ShiftRight>>(m, "__rshift__.Tensor", "__irshift__.Tensor", nullptr);
  registerForms<Math<BinaryOp::ShiftLeft, Tensor, Scalar>>(m, "__lshift__.Scalar",
                                                           "__ilshift__.Scalar", nullptr);
  registerForms<Math<BinaryOp::ShiftRight, Tensor, Scalar>>(m, "__rshift__.Scalar",
                                                            "__irshift__.Scalar", nullptr);
  registerForms<Math<BinaryOp::Fmax>>(m, "fmax", nullptr, "fmax.out");
  registerForms<Math<BinaryOp::Fmin>>(m, "fmin", nullptr, "fmin.out");
  registerForms<Math<BinaryOp::Heaviside>>(m, "heaviside", "heaviside_", "heaviside.out");
  registerForms<Math<BinaryOp::Gcd>>(m, "gcd", "gcd_", "gcd.out");
  registerForms<Math<BinaryOp::Lcm>>(m, "lcm", "lcm_", "lcm.out");
  registerForms<Math<BinaryOp::Copysign>>(m, "copysign.Tensor", "copysign_.Tensor", "copysign.out");
  registerForms<Math<BinaryOp::LogAddExp>>(m, "logaddexp", nullptr, "logaddexp.out");
  registerForms<Math<BinaryOp::LogAddExp2>>(m, "logaddexp2", nullptr, "logaddexp2.out");
  registerForms<Math<BinaryOp::NextAfter>>(m, "nextafter", "nextafter_", "nextafter.out");
  registerForms<Math<BinaryOp::Xlog1py>>(m, "special_xlog1py", nullptr, "special_xlog1py.out");
  registerForms<Math<BinaryOp::Zeta>>(m, "special_zeta", nullptr, "special_zeta.out");
  registerForms<Math<BinaryOp::Igamma>>(m, "igamma", "igamma_", "igamma.out");
  registerForms<Math<BinaryOp::Igammac>>(m, "igammac", "igammac_", "igammac.out");
  registerNative<StandardGammaGrad>(m, "_standard_gamma_grad");
#define ACCEL_REGISTER_POLYNOMIAL(OP, NAME) \
  registerForms<Math<BinaryOp::OP>>(m, "special_" NAME, nullptr, "special_" NAME ".out");
  ACCEL_REGISTER_POLYNOMIAL(ChebyshevT, "chebyshev_polynomial_t")
  ACCEL_REGISTER_POLYNOMIAL(ChebyshevU, "chebyshev_polynomial_u")
  ACCEL_REGISTER_POLYNOMIAL(ChebyshevV, "chebyshev_polynomial_v")
  ACCEL_REGISTER_POLYNOMIAL(ChebyshevW, "chebyshev_polynomial_w")
  ACCEL_REGISTER_POLYNOMIAL(ShiftedChebyshevT, "shifted_chebyshev_polynomial_t")
  ACCEL_REGISTER_POLYNOMIAL(ShiftedChebyshevU, "shifted_chebyshev_polynomial_u")
  ACCEL_REGISTER_POLYNOMIAL(ShiftedChebyshevV, "shifted_chebyshev_polynomial_v")
  ACCEL_REGISTER_POLYNOMIAL(ShiftedChebyshevW, "shifted_chebyshev_polynomial_w")
  ACCEL_REGISTER_POLYNOMIAL(HermiteH, "hermite_polynomial_h")
  ACCEL_REGISTER_POLYNOMIAL(HermiteHe, "hermite_polynomial_he")
  ACCEL_REGISTER_POLYNOMIAL(LaguerreL, "laguerre_polynomial_l")
  ACCEL_REGISTER_POLYNOMIAL(LegendreP, "legendre_polynomial_p")
#undef ACCEL_REGISTER_POLYNOMIAL
  registerForms<GeluBackward>(m, "gelu_backward", nullptr, "gelu_backward.grad_input");
  registerForms<Backward<BinaryOp::SiluBackward>>(m, "silu_backward", nullptr,
                                                  "silu_backward.grad_input");
  registerForms<Backward<BinaryOp::TanhBackward>>(m, "tanh_backward", nullptr,
                                                  "tanh_backward.grad_input");
  registerForms<Backward<BinaryOp::SigmoidBackward>>(m, "sigmoid_backward", nullptr,
                                                     "sigmoid_backward.grad_input");
  registerForms<ThresholdBackward>(m, "threshold_backward", nullptr,
                                   "threshold_backward.grad_input");
}

}  // namespace
}  // namespace accel
