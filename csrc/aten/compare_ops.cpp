// Comparisons (eq ne lt le gt ge) and logical and/or/xor: Tensor and Scalar overloads,
// functional, in-place and out=; torch.equal. Inputs compare in their common dtype; the result is
// bool (an in-place or out= tensor of another dtype receives it cast).
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include "aten/elementwise_desc.h"
#include "aten/elementwise_iter.h"
#include "aten/op_forms.h"
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
      const kernels::Scalar rhs =
          c10::isComplexType(t) ? toKernelComplexScalar(b.item()) : toKernelScalar(b.item());
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

// Complex values compare for equality and as truth values, never by order (CPU refuses
// that, through the fallback).
bool nativeCompareType(CompareOp op, c10::ScalarType t) {
  if (kernelSupports(t)) return true;
  return kernelSupportsComplex(t) && op != CompareOp::Lt && op != CompareOp::Le &&
         op != CompareOp::Gt && op != CompareOp::Ge;
}

bool nativeCompare(CompareOp op, const at::Tensor& a, const at::Tensor& b) {
  return kernelKnows(a.scalar_type()) && kernelKnows(b.scalar_type()) &&
         nativeCompareType(op, at::result_type(a, b));
}

template <CompareOp Op>
struct CompareTensor {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& a, const at::Tensor& b) { return nativeCompare(Op, a, b); }
  static at::Tensor compute(const at::Tensor& a, const at::Tensor& b, const Output& out) {
    return compare(Op, a, b, out.tensor());
  }
};

template <CompareOp Op>
struct CompareScalar {
  static constexpr bool kComplex = true;
  static bool native(const at::Tensor& a, const c10::Scalar& b) {
    return kernelKnows(a.scalar_type()) && nativeCompareType(Op, at::result_type(a, b));
  }
  static at::Tensor compute(const at::Tensor& a, const c10::Scalar& b, const Output& out) {
    return compare(Op, a, wrappedScalar(b), out.tensor());
  }
};

// torch.equal: the same sizes and every element equal (NaN never is), computed as CUDA does.
struct Equal {
  static bool native(const at::Tensor& a, const at::Tensor& b) {
    return nativeCompare(CompareOp::Eq, a, b);
  }
  static bool compute(const at::Tensor& a, const at::Tensor& b) {
    TORCH_CHECK(a.device() == b.device(),
                "Cannot compare two tensors on different devices. Got: ", a.device(), " and ",
                b.device());
    if (!a.sizes().equals(b.sizes())) return false;
    if (a.numel() == 0) return true;
    return at::eq(a, b).all().item<bool>();
  }
};

#define ACCEL_REGISTER_COMPARE(OP, NAME)                                          \
  registerForms<CompareTensor<CompareOp::OP>>(m, NAME ".Tensor", NAME "_.Tensor", \
                                              NAME ".Tensor_out");                \
  registerForms<CompareScalar<CompareOp::OP>>(m, NAME ".Scalar", NAME "_.Scalar", \
                                              NAME ".Scalar_out");

#define ACCEL_REGISTER_LOGICAL(OP, NAME)                                                        \
  registerForms<CompareTensor<CompareOp::Logical##OP>>(m, "logical_" NAME, "logical_" NAME "_", \
                                                       "logical_" NAME ".out");

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  ACCEL_REGISTER_COMPARE(Eq, "eq")
  ACCEL_REGISTER_COMPARE(Ne, "ne")
  ACCEL_REGISTER_COMPARE(Lt, "lt")
  ACCEL_REGISTER_COMPARE(Le, "le")
  ACCEL_REGISTER_COMPARE(Gt, "gt")
  ACCEL_REGISTER_COMPARE(Ge, "ge")
  ACCEL_REGISTER_LOGICAL(And, "and")
  ACCEL_REGISTER_LOGICAL(Or, "or")
  ACCEL_REGISTER_LOGICAL(Xor, "xor")
  registerNative<Equal>(m, "equal");
}

}  // namespace
}  // namespace accel
