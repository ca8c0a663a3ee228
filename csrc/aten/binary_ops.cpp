// add, sub, mul, div (Tensor, in-place and out= forms). Shapes, broadcasting and type
// promotion come from TensorIterator and at::result_type; a Python scalar (a 0-dim CPU
// "wrapped number") is passed to the kernel by value instead of being copied to the device.
#include <ATen/ExpandUtils.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/fallback.h"
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
at::Tensor binary(BinaryOp op, const at::Tensor& a, const at::Tensor& b,
                  const c10::Scalar& alpha, at::Tensor out) {
  c10::ScalarType common = resultType(op, a, b);
  TORCH_CHECK(!(op == BinaryOp::Sub && common == c10::kBool),
              "Subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead.");
  if (out.defined()) {
    TORCH_CHECK(c10::canCast(common, out.scalar_type()), "result type ", common,
                " can't be cast to the desired output type ", out.scalar_type());
  }
  bool b_scalar = isHostScalar(b) && !isHostScalar(a);
  for (const at::Tensor* t : {&a, &b}) {
    TORCH_CHECK(t->is_privateuseone() || isHostScalar(*t),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                a.device(), " and ", b.device(), "! (when checking argument for argument other in ",
                "method ", opName(op), ")");
  }

  // A Python scalar on the left (mul_.Scalar calls mul.out(scalar, self)) is filled on the
  // device: kernels never read host memory.
  const at::Tensor lhs = isHostScalar(a) && !isHostScalar(b) ? asComputeInput(a, common, b.device()) : a;
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true).check_all_same_dtype(false);
  at::Tensor undefined;
  config.add_output(out.defined() ? out : undefined);
  if (!out.defined()) config.declare_static_dtype(common);
  config.add_const_input(lhs);
  if (!b_scalar) config.add_const_input(b);
  auto iter = config.build();
  at::Tensor result = iter.output();
  if (result.numel() == 0) return result;
  int device = result.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  if (b_scalar) {
    c10::Scalar rhs = b.item();
    if (op == BinaryOp::Add || op == BinaryOp::Sub) {
      rhs = c10::isIntegralType(common, true) ? c10::Scalar(rhs.toLong() * alpha.toLong())
                                              : c10::Scalar(rhs.toDouble() * alpha.toDouble());
    }
    ACCEL_RT_CHECK(kernels::binaryTable().binary_scalar(op, makeDesc(iter), toKernelScalar(rhs), stream),
                   device);
  } else {
    ACCEL_RT_CHECK(kernels::binaryTable().binary(op, makeDesc(iter), toKernelScalar(alpha), stream),
                   device);
  }
  return result;
}

bool supported(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out = {}) {
  return kernelSupports(a.scalar_type()) && kernelSupports(b.scalar_type()) &&
         (!out.defined() || kernelSupports(out.scalar_type())) &&
         kernelSupports(at::result_type(a, b));
}

// The schema names, for the fallback of dtypes the kernels lack.
template <BinaryOp Op>
std::string schemaName(bool inplace) {
  return std::string("aten::") + opName(Op) + (inplace ? "_" : "");
}

template <BinaryOp Op>
at::Tensor functional(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  if (!supported(a, b)) {
    static auto op = findOp(schemaName<Op>(false).c_str(), "Tensor");
    return fallbackCall<at::Tensor>(op, a, b, alpha);
  }
  return binary(Op, a, b, alpha, {});
}
template <BinaryOp Op>
at::Tensor& inplace(at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  if (!supported(a, b, a)) {
    static auto op = findOp(schemaName<Op>(true).c_str(), "Tensor");
    fallbackCall<at::Tensor>(op, a, b, alpha);
    return a;
  }
  binary(Op, a, b, alpha, a);
  return a;
}
template <BinaryOp Op>
at::Tensor& out_form(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
                     at::Tensor& out) {
  if (!supported(a, b, out)) {
    static auto op = findOp(schemaName<Op>(false).c_str(), "out");
    fallbackCall<at::Tensor>(op, a, b, alpha, out);
    return out;
  }
  binary(Op, a, b, alpha, out);
  return out;
}

// mul and div take no alpha.
template <BinaryOp Op>
at::Tensor functional2(const at::Tensor& a, const at::Tensor& b) {
  if (!supported(a, b)) {
    static auto op = findOp(schemaName<Op>(false).c_str(), "Tensor");
    return fallbackCall<at::Tensor>(op, a, b);
  }
  return binary(Op, a, b, 1, {});
}
template <BinaryOp Op>
at::Tensor& inplace2(at::Tensor& a, const at::Tensor& b) {
  if (!supported(a, b, a)) {
    static auto op = findOp(schemaName<Op>(true).c_str(), "Tensor");
    fallbackCall<at::Tensor>(op, a, b);
    return a;
  }
  binary(Op, a, b, 1, a);
  return a;
}
template <BinaryOp Op>
at::Tensor& out_form2(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  if (!supported(a, b, out)) {
    static auto op = findOp(schemaName<Op>(false).c_str(), "out");
    fallbackCall<at::Tensor>(op, a, b, out);
    return out;
  }
  binary(Op, a, b, 1, out);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", functional<BinaryOp::Add>);
  m.impl("add_.Tensor", inplace<BinaryOp::Add>);
  m.impl("add.out", out_form<BinaryOp::Add>);
  m.impl("sub.Tensor", functional<BinaryOp::Sub>);
  m.impl("sub_.Tensor", inplace<BinaryOp::Sub>);
  m.impl("sub.out", out_form<BinaryOp::Sub>);
  m.impl("mul.Tensor", functional2<BinaryOp::Mul>);
  m.impl("mul_.Tensor", inplace2<BinaryOp::Mul>);
  m.impl("mul.out", out_form2<BinaryOp::Mul>);
  m.impl("div.Tensor", functional2<BinaryOp::Div>);
  m.impl("div_.Tensor", inplace2<BinaryOp::Div>);
  m.impl("div.out", out_form2<BinaryOp::Div>);
}

}  // namespace
}  // namespace accel
