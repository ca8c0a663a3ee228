// add, sub, mul, div (Tensor, in-place and out= forms). Shapes, broadcasting and type
// promotion come from TensorIterator and at::result_type; a Python scalar (a 0-dim CPU
// "wrapped number") is passed to the kernel by value instead of being copied to the device.
#include <ATen/ExpandUtils.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <utility>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/binary.h"

namespace accel {
namespace {

using kernels::BinaryOp;

c10::ScalarType resultType(BinaryOp op, const at::Tensor& a, const at::Tensor& b) {
  c10::ScalarType t = at::result_type(a, b);
  if (op == BinaryOp::Div && c10::isIntegralType(t, /*includeBool=*/true)) {
    t = c10::typeMetaToScalarType(c10::get_default_dtype());
  }
  return t;
}

const char* opName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    default: break;  // the other ops are registered by binary_math_ops.cpp
  }
  return "?";
}

// out = a op (alpha * b). `out` may be undefined (allocated here) or a given/in-place output.
at::Tensor binary(BinaryOp op, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
                  at::Tensor out) {
  // A Python scalar on the left of a product (mul_.Scalar calls mul.out(scalar, self), and so
  // does every _foreach_mul_) is passed by value, as one on the right is: the product is the
  // same either way round, bit for bit.
  if (op == BinaryOp::Mul && isHostScalar(a) && !isHostScalar(b))
    return binary(op, b, a, alpha, std::move(out));
  c10::ScalarType common = resultType(op, a, b);
  TORCH_CHECK(!(op == BinaryOp::Sub && common == c10::kBool),
              "Subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead.");
  if (out.defined()) {
    TORCH_CHECK(c10::canCast(common, out.scalar_type()), "result type ", common,
                " can't be cast to the desired output type ", out.scalar_type());
  }
  const bool complex = c10::isComplexType(common);
  // A complex alpha other than 1 stays a factor of its own (CPU computes a + alpha * b, and
  // folding alpha into b first rounds inf components differently), so b is then filled on
  // the device like a tensor operand.
  const bool fold_alpha = !complex || alpha.equal(1);
  bool b_scalar = isHostScalar(b) && !isHostScalar(a) && fold_alpha;
  for (const at::Tensor* t : {&a, &b}) {
    TORCH_CHECK(t->is_privateuseone() || isHostScalar(*t),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                a.device(), " and ", b.device(), "! (when checking argument for argument other in ",
                "method ", opName(op), ")");
  }

  // A Python scalar on the left (of a difference or quotient) is filled on the device:
  // kernels never read host memory.
  const at::Tensor lhs =
      isHostScalar(a) && !isHostScalar(b) ? asComputeInput(a, common, b.device()) : a;
  const at::Tensor rhs_tensor =
      isHostScalar(b) && !isHostScalar(a) && !b_scalar ? asComputeInput(b, common, a.device()) : b;
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true).check_all_same_dtype(false);
  at::Tensor undefined;
  config.add_output(out.defined() ? out : undefined);
  if (!out.defined()) config.declare_static_dtype(common);
  config.add_const_input(lhs);
  if (!b_scalar) config.add_const_input(rhs_tensor);
  auto iter = config.build();
  at::Tensor result = iter.output();
  if (result.numel() == 0) return result;
  int device = result.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  auto scalar = [complex](const c10::Scalar& s) {
    return complex ? toKernelComplexScalar(s) : toKernelScalar(s);
  };
  if (b_scalar) {
    c10::Scalar rhs = b.item();
    if (op == BinaryOp::Add || op == BinaryOp::Sub) {
      if (!complex) {
        rhs = c10::isIntegralType(common, true) ? c10::Scalar(rhs.toLong() * alpha.toLong())
                                                : c10::Scalar(rhs.toDouble() * alpha.toDouble());
      }
    }
    ACCEL_RT_CHECK(kernels::binaryTable().binary_scalar(op, makeDesc(iter), scalar(rhs), stream),
                   device);
  } else {
    ACCEL_RT_CHECK(kernels::binaryTable().binary(op, makeDesc(iter), scalar(alpha), stream),
                   device);
  }
  return result;
}

// Real results, or complex ones (complex32 only adds, subtracts and multiplies, as on CPU);
// a complex alpha only with a complex result (CPU refuses the rest, through the fallback).
bool nativeBinary(BinaryOp op, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  if (!kernelKnows(a.scalar_type()) || !kernelKnows(b.scalar_type())) return false;
  const c10::ScalarType t = at::result_type(a, b);
  if (kernelSupports(t)) return !alpha.isComplex();
  return kernelSupportsComplex(t) && !(op == BinaryOp::Div && t == c10::kComplexHalf);
}

// add and sub take alpha; mul and div do not.
template <BinaryOp Op>
struct WithAlpha {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
    return nativeBinary(Op, a, b, alpha);
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
                            const Output& out) {
    return binary(Op, a, b, alpha, out.tensor());
  }
};

template <BinaryOp Op>
struct NoAlpha {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& a, const at::Tensor& b) {
    return WithAlpha<Op>::native(a, b, 1);
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const Output& out) {
    return binary(Op, a, b, 1, out.tensor());
  }
};

// rsub(self, other, alpha) = other - alpha * self (rsub.Scalar, a composite, calls it with
// other a wrapped number).
struct Rsub {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
    return nativeBinary(BinaryOp::Sub, b, a, alpha);
  }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
                            const Output& out) {
    return binary(BinaryOp::Sub, b, a, alpha, out.tensor());
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<WithAlpha<BinaryOp::Add>>(m, "add.Tensor", "add_.Tensor", "add.out");
  registerForms<WithAlpha<BinaryOp::Sub>>(m, "sub.Tensor", "sub_.Tensor", "sub.out");
  registerForms<NoAlpha<BinaryOp::Mul>>(m, "mul.Tensor", "mul_.Tensor", "mul.out");
  registerForms<NoAlpha<BinaryOp::Div>>(m, "div.Tensor", "div_.Tensor", "div.out");
  registerForms<Rsub>(m, "rsub.Tensor", nullptr, nullptr);
}

}  // namespace
}  // namespace accel
