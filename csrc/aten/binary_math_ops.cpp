// Binary ops beyond add/sub/mul/div: div with a rounding mode, pow, maximum/minimum,
// remainder/fmod, atan2, bitwise and/or/xor, and the activations' backward. Inputs are
// converted to the result dtype first (the kernels take one dtype); a Python scalar rhs is
// passed by value, a Python scalar lhs is filled on the device.
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/fallback.h"
#include "kernels/binary.h"

namespace accel {
namespace {

using kernels::BinaryOp;

at::Tensor binaryTyped(BinaryOp op, const at::Tensor& a, const at::Tensor& b,
                       const at::Tensor& out, c10::ScalarType t, const c10::Scalar& arg = 0) {
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
  return runElementwise(out, t, {x, y}, [op, karg](const kernels::ElementwiseDesc& d, rt::Stream s) {
    return kernels::binaryTable().binary(op, d, karg, s);
  });
}

bool supported(std::initializer_list<c10::ScalarType> ts) {
  for (auto t : ts)
    if (!kernelSupports(t)) return false;
  return true;
}

// --- div with rounding_mode -------------------------------------------------------------
at::Tensor& divModeInto(const at::Tensor& a, const at::Tensor& b,
                        c10::optional<c10::string_view> mode, at::Tensor& out, bool has_out);

at::Tensor divMode(const at::Tensor& a, const at::Tensor& b,
                   c10::optional<c10::string_view> mode) {
  if (!mode) return at::div(a, b);
  at::Tensor out;
  return divModeInto(a, b, mode, out, false);
}
at::Tensor& divModeInto(const at::Tensor& a, const at::Tensor& b,
                        c10::optional<c10::string_view> mode, at::Tensor& out, bool has_out) {
  if (!mode) return has_out ? at::div_out(out, a, b) : (out = at::div(a, b));
  TORCH_CHECK(*mode == "trunc" || *mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
              *mode, "'");
  const c10::ScalarType t = at::result_type(a, b);
  if (!supported({t, a.scalar_type(), b.scalar_type()})) {
    static auto op = findOp("aten::div", "out_mode");
    if (!has_out) out = at::empty({0}, a.options().dtype(t));
    fallbackCall<at::Tensor>(op, a, b, mode, out);
    return out;
  }
  out = binaryTyped(*mode == "trunc" ? BinaryOp::DivTrunc : BinaryOp::DivFloor, a, b,
                    has_out ? out : at::Tensor(), t);
  return out;
}
at::Tensor div_Tensor_mode(const at::Tensor& a, const at::Tensor& b,
                           c10::optional<c10::string_view> mode) {
  return divMode(a, b, mode);
}
at::Tensor& div__Tensor_mode(at::Tensor& a, const at::Tensor& b,
                             c10::optional<c10::string_view> mode) {
  return divModeInto(a, b, mode, a, true);
}
at::Tensor& div_out_mode(const at::Tensor& a, const at::Tensor& b,
                         c10::optional<c10::string_view> mode, at::Tensor& out) {
  return divModeInto(a, b, mode, out, true);
}

// --- the same-dtype binary ops: functional, in-place, out= over Tensor operands ----------
template <BinaryOp Op>
struct Forms {
  static c10::ScalarType type(const at::Tensor& a, const at::Tensor& b) {
    c10::ScalarType t = at::result_type(a, b);
    if (Op == BinaryOp::Atan2) t = floatingOf(t);
    if (Op == BinaryOp::BitwiseAnd || Op == BinaryOp::BitwiseOr || Op == BinaryOp::BitwiseXor)
      TORCH_CHECK(c10::isIntegralType(t, /*includeBool=*/true),
                  "\"bitwise_cpu\" not implemented for '", t, "'");
    return t;
  }
  static at::Tensor functional(const at::Tensor& a, const at::Tensor& b) {
    return binaryTyped(Op, a, b, at::Tensor(), type(a, b));
  }
  static at::Tensor& inplace(at::Tensor& a, const at::Tensor& b) {
    const c10::ScalarType t = type(a, b);
    TORCH_CHECK(c10::canCast(t, a.scalar_type()), "result type ", t,
                " can't be cast to the desired output type ", a.scalar_type());
    binaryTyped(Op, a, b, a, t);
    return a;
  }
  static at::Tensor& out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
    binaryTyped(Op, a, b, out, type(a, b));
    return out;
  }
};


// pow.Scalar: scalar ** tensor.
at::Tensor pow_Scalar(const c10::Scalar& base, const at::Tensor& exp) {
  return Forms<BinaryOp::Pow>::functional(wrappedScalar(base), exp);
}
at::Tensor& pow_Scalar_out(const c10::Scalar& base, const at::Tensor& exp, at::Tensor& out) {
  return Forms<BinaryOp::Pow>::out(wrappedScalar(base), exp, out);
}
at::Tensor pow_Tensor_Scalar(const at::Tensor& a, const c10::Scalar& e) {
  return Forms<BinaryOp::Pow>::functional(a, wrappedScalar(e));
}
at::Tensor& pow__Scalar(at::Tensor& a, const c10::Scalar& e) {
  return Forms<BinaryOp::Pow>::inplace(a, wrappedScalar(e));
}
at::Tensor& pow_Tensor_Scalar_out(const at::Tensor& a, const c10::Scalar& e, at::Tensor& out) {
  return Forms<BinaryOp::Pow>::out(a, wrappedScalar(e), out);
}
at::Tensor remainder_Scalar(const at::Tensor& a, const c10::Scalar& b) {
  return Forms<BinaryOp::Remainder>::functional(a, wrappedScalar(b));
}
at::Tensor fmod_Scalar(const at::Tensor& a, const c10::Scalar& b) {
  return Forms<BinaryOp::Fmod>::functional(a, wrappedScalar(b));
}

// --- activations' backward -------------------------------------------------------------
c10::ScalarType gradType(const at::Tensor& g, const at::Tensor& x) { return at::result_type(g, x); }

at::Tensor gelu_backward(const at::Tensor& g, const at::Tensor& x, c10::string_view approximate) {
  return binaryTyped(approximate == "tanh" ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward,
                     g, x, at::Tensor(), gradType(g, x));
}
at::Tensor& gelu_backward_out(const at::Tensor& g, const at::Tensor& x,
                              c10::string_view approximate, at::Tensor& out) {
  binaryTyped(approximate == "tanh" ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward, g, x,
              out, gradType(g, x));
  return out;
}
at::Tensor silu_backward(const at::Tensor& g, const at::Tensor& x) {
  return binaryTyped(BinaryOp::SiluBackward, g, x, at::Tensor(), gradType(g, x));
}
at::Tensor& silu_backward_out(const at::Tensor& g, const at::Tensor& x, at::Tensor& out) {
  binaryTyped(BinaryOp::SiluBackward, g, x, out, gradType(g, x));
  return out;
}
at::Tensor tanh_backward(const at::Tensor& g, const at::Tensor& y) {
  return binaryTyped(BinaryOp::TanhBackward, g, y, at::Tensor(), gradType(g, y));
}
at::Tensor& tanh_backward_out(const at::Tensor& g, const at::Tensor& y, at::Tensor& out) {
  binaryTyped(BinaryOp::TanhBackward, g, y, out, gradType(g, y));
  return out;
}
at::Tensor sigmoid_backward(const at::Tensor& g, const at::Tensor& y) {
  return binaryTyped(BinaryOp::SigmoidBackward, g, y, at::Tensor(), gradType(g, y));
}
at::Tensor& sigmoid_backward_out(const at::Tensor& g, const at::Tensor& y, at::Tensor& out) {
  binaryTyped(BinaryOp::SigmoidBackward, g, y, out, gradType(g, y));
  return out;
}
at::Tensor threshold_backward(const at::Tensor& g, const at::Tensor& x, const c10::Scalar& th) {
  return binaryTyped(BinaryOp::ThresholdBackward, g, x, at::Tensor(), gradType(g, x), th);
}
at::Tensor& threshold_backward_out(const at::Tensor& g, const at::Tensor& x,
                                   const c10::Scalar& th, at::Tensor& out) {
  binaryTyped(BinaryOp::ThresholdBackward, g, x, out, gradType(g, x), th);
  return out;
}

#define ACCEL_REGISTER_BINARY(OP, NAME, OVERLOAD)                \
  m.impl(NAME OVERLOAD, Forms<BinaryOp::OP>::functional);         \
  m.impl(NAME "_" OVERLOAD, Forms<BinaryOp::OP>::inplace);        \
  m.impl(NAME ".out", Forms<BinaryOp::OP>::out);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("div.Tensor_mode", div_Tensor_mode);
  m.impl("div_.Tensor_mode", div__Tensor_mode);
  m.impl("div.out_mode", div_out_mode);
  // floor_divide is division rounded down (not C++'s truncation), as Python's //.
  m.impl("floor_divide", Forms<BinaryOp::DivFloor>::functional);
  m.impl("floor_divide_.Tensor", Forms<BinaryOp::DivFloor>::inplace);
  m.impl("floor_divide.out", Forms<BinaryOp::DivFloor>::out);
  m.impl("pow.Tensor_Tensor", Forms<BinaryOp::Pow>::functional);
  m.impl("pow_.Tensor", Forms<BinaryOp::Pow>::inplace);
  m.impl("pow.Tensor_Tensor_out", Forms<BinaryOp::Pow>::out);
  m.impl("pow.Tensor_Scalar", pow_Tensor_Scalar);
  m.impl("pow_.Scalar", pow__Scalar);
  m.impl("pow.Tensor_Scalar_out", pow_Tensor_Scalar_out);
  m.impl("pow.Scalar", pow_Scalar);
  m.impl("pow.Scalar_out", pow_Scalar_out);
  m.impl("maximum", Forms<BinaryOp::Maximum>::functional);
  m.impl("maximum.out", Forms<BinaryOp::Maximum>::out);
  m.impl("minimum", Forms<BinaryOp::Minimum>::functional);
  m.impl("minimum.out", Forms<BinaryOp::Minimum>::out);
  ACCEL_REGISTER_BINARY(Remainder, "remainder", ".Tensor")
  m.impl("remainder.Scalar", remainder_Scalar);
  ACCEL_REGISTER_BINARY(Fmod, "fmod", ".Tensor")
  m.impl("fmod.Scalar", fmod_Scalar);
  ACCEL_REGISTER_BINARY(Atan2, "atan2", "")
  m.impl("bitwise_and.Tensor", Forms<BinaryOp::BitwiseAnd>::functional);
  m.impl("bitwise_and_.Tensor", Forms<BinaryOp::BitwiseAnd>::inplace);
  m.impl("bitwise_and.Tensor_out", Forms<BinaryOp::BitwiseAnd>::out);
  m.impl("bitwise_or.Tensor", Forms<BinaryOp::BitwiseOr>::functional);
  m.impl("bitwise_or_.Tensor", Forms<BinaryOp::BitwiseOr>::inplace);
  m.impl("bitwise_or.Tensor_out", Forms<BinaryOp::BitwiseOr>::out);
  m.impl("bitwise_xor.Tensor", Forms<BinaryOp::BitwiseXor>::functional);
  m.impl("bitwise_xor_.Tensor", Forms<BinaryOp::BitwiseXor>::inplace);
  m.impl("bitwise_xor.Tensor_out", Forms<BinaryOp::BitwiseXor>::out);
  m.impl("gelu_backward", gelu_backward);
  m.impl("gelu_backward.grad_input", gelu_backward_out);
  m.impl("silu_backward", silu_backward);
  m.impl("silu_backward.grad_input", silu_backward_out);
  m.impl("tanh_backward", tanh_backward);
  m.impl("tanh_backward.grad_input", tanh_backward_out);
  m.impl("sigmoid_backward", sigmoid_backward);
  m.impl("sigmoid_backward.grad_input", sigmoid_backward_out);
  m.impl("threshold_backward", threshold_backward);
  m.impl("threshold_backward.grad_input", threshold_backward_out);
}

}  // namespace
}  // namespace accel
