// Comparisons (eq ne lt le gt ge) and logical and/or/xor: Tensor and Scalar overloads,
// functional, in-place and out=. Inputs compare in their common dtype; the result is bool
// (an in-place or out= tensor of another dtype receives it cast).
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "kernels/compare.h"
#include "kernels/copy.h"

namespace accel {
namespace {

using kernels::CompareOp;

at::Tensor compare(CompareOp op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  const c10::Device device = commonDevice({a, b}, "comparison");
  const c10::ScalarType t = at::result_type(a, b);
  const c10::ScalarType result = out.defined() ? out.scalar_type() : c10::kBool;
  auto run = [&](const at::Tensor& o) {
    if (isHostScalar(b) && !isHostScalar(a)) {
      const kernels::Scalar rhs = toKernelScalar(b.item());
      return runElementwise(o, c10::kBool, {asComputeInput(a, t, device)},
                            [op, rhs](const kernels::ElementwiseDesc& d, rt::Stream s) {
                              return kernels::compareTable().compare_scalar(op, d, rhs, s);
                            });
    }
    return runElementwise(o, c10::kBool,
                          {asComputeInput(a, t, device), asComputeInput(b, t, device)},
                          [op](const kernels::ElementwiseDesc& d, rt::Stream s) {
                            return kernels::compareTable().compare(op, d, s);
                          });
  };
  if (result == c10::kBool) return run(out);
  // A non-bool output (in-place `a.lt_(b)`, out=): compute bool, then cast into it.
  at::Tensor tmp = run(at::Tensor());
  return runElementwise(out, result, {tmp}, [](const kernels::ElementwiseDesc& d, rt::Stream s) {
    return kernels::copyTable().copy(d, s);
  });
}


template <CompareOp Op>
struct Forms {
  static at::Tensor tensor(const at::Tensor& a, const at::Tensor& b) {
    return compare(Op, a, b, at::Tensor());
  }
  static at::Tensor& tensor_(at::Tensor& a, const at::Tensor& b) {
    compare(Op, a, b, a);
    return a;
  }
  static at::Tensor& tensorOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
    compare(Op, a, b, out);
    return out;
  }
  static at::Tensor scalar(const at::Tensor& a, const c10::Scalar& b) {
    return compare(Op, a, wrappedScalar(b), at::Tensor());
  }
  static at::Tensor& scalar_(at::Tensor& a, const c10::Scalar& b) {
    compare(Op, a, wrappedScalar(b), a);
    return a;
  }
  static at::Tensor& scalarOut(const at::Tensor& a, const c10::Scalar& b, at::Tensor& out) {
    compare(Op, a, wrappedScalar(b), out);
    return out;
  }
};

#define ACCEL_REGISTER_COMPARE(OP, NAME)                  \
  m.impl(NAME ".Tensor", Forms<CompareOp::OP>::tensor);     \
  m.impl(NAME "_.Tensor", Forms<CompareOp::OP>::tensor_);   \
  m.impl(NAME ".Tensor_out", Forms<CompareOp::OP>::tensorOut); \
  m.impl(NAME ".Scalar", Forms<CompareOp::OP>::scalar);     \
  m.impl(NAME "_.Scalar", Forms<CompareOp::OP>::scalar_);   \
  m.impl(NAME ".Scalar_out", Forms<CompareOp::OP>::scalarOut);

#define ACCEL_REGISTER_LOGICAL(OP, NAME)             \
  m.impl(NAME, Forms<CompareOp::OP>::tensor);          \
  m.impl(NAME "_", Forms<CompareOp::OP>::tensor_);     \
  m.impl(NAME ".out", Forms<CompareOp::OP>::tensorOut);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  ACCEL_REGISTER_COMPARE(Eq, "eq")
  ACCEL_REGISTER_COMPARE(Ne, "ne")
  ACCEL_REGISTER_COMPARE(Lt, "lt")
  ACCEL_REGISTER_COMPARE(Le, "le")
  ACCEL_REGISTER_COMPARE(Gt, "gt")
  ACCEL_REGISTER_COMPARE(Ge, "ge")
  ACCEL_REGISTER_LOGICAL(LogicalAnd, "logical_and")
  ACCEL_REGISTER_LOGICAL(LogicalOr, "logical_or")
  ACCEL_REGISTER_LOGICAL(LogicalXor, "logical_xor")
}

}  // namespace
}  // namespace accel
