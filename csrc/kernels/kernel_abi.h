// The kernel ABI: plain descriptors and a table of entry points. The aten layer fills the
// descriptors (from TensorIterator) and calls `table()`, which is the host build or the CUDA
// build of the same kernel sources, depending on the driver in use. Knows no torch.
#pragma once

#include <cstdint>

#include "runtime/driver.h"

namespace accel::kernels {

// Values equal c10::ScalarType's, so the aten layer converts with a cast.
enum class DType : int8_t {
  UInt8 = 0,
  Int8 = 1,
  Int16 = 2,
  Int32 = 3,
  Int64 = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
};

// TensorIterator's limit.
constexpr int kMaxDims = 25;
constexpr int kMaxOperands = 4;

struct Operand {
  char* data = nullptr;
  DType dtype = DType::Float;
  int64_t strides[kMaxDims] = {};  // in bytes, innermost dimension first (TensorIterator order)
};

// An elementwise problem over `sizes` (innermost first); operand 0 is the output.
struct ElementwiseDesc {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t numel = 0;
  int noperands = 0;
  Operand op[kMaxOperands];
};

// A Python scalar or 0-dim value, already converted by the caller.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  bool is_integral = false;  // true: use `i`, else `f`
};

// Add and Sub take alpha; Lerp takes the weight and ThresholdBackward the threshold as alpha
// (both only with two tensors, never with a scalar rhs). Every op after Div needs both inputs in the output dtype.
enum class BinaryOp : int {
  Add, Sub, Mul, Div,
  DivFloor, DivTrunc, Pow, Maximum, Minimum, Remainder, Fmod, Atan2,
  BitwiseAnd, BitwiseOr, BitwiseXor,
  Lerp,  // a + alpha * (b - a), alpha the weight (a tensor weight is TernaryOp::Lerp)
  // Backward of activations: a is the incoming gradient, b the forward input (or output).
  GeluBackward, GeluTanhBackward, SiluBackward, TanhBackward, SigmoidBackward,
  ThresholdBackward,
};

enum class UnaryOp : int {
  Neg, Abs, Sign, Relu, BitwiseNot, LogicalNot, IsNan, IsFinite,
  Exp, Exp2, Expm1, Log, Log1p, Log2, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tanh, Sigmoid, Erf,
  Floor, Ceil, Round, Trunc, Silu, Gelu, GeluTanh,
  Clamp,      // a = min (if has_a), b = max (if has_b)
  NanToNum,   // a = nan, b = posinf, c = neginf replacements
  Softplus,   // a = beta, b = threshold
};

struct UnaryParams {
  Scalar a, b, c;
  bool has_a = false, has_b = false;
};

// out (bool) = a op b. Inputs in one dtype (the comparison's common dtype).
enum class CompareOp : int { Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor };

// Three inputs, all in the output dtype except Where's condition (bool).
enum class TernaryOp : int {
  Where,    // cond ? a : b
  Lerp,     // a + w * (b - a), w the third input
  Addcmul,  // a + value * b * c
  Addcdiv,  // a + value * b / c
  Clamp,    // min(max(a, lo), hi): b = lo, c = hi
};

struct KernelTable {
  // out[i] = cast(in[i]): operand 0 is the destination, operand 1 the source.
  rt::Error (*copy)(const ElementwiseDesc& d, rt::Stream stream);
  // out[i] = value.
  rt::Error (*fill)(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
  // out = a op (alpha * b) for Add/Sub (alpha ignored otherwise); computed in out's dtype.
  rt::Error (*binary)(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream);
  // out = a op rhs: operand 0 is the output, operand 1 the tensor input.
  rt::Error (*binary_scalar)(BinaryOp op, const ElementwiseDesc& d, Scalar rhs,
                             rt::Stream stream);
  // out = op(in): operand 0 the output, operand 1 the input (same dtype; bool out for the
  // predicates LogicalNot, IsNan, IsFinite).
  rt::Error (*unary)(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p,
                     rt::Stream stream);
  // out (bool) = a op b, a and b in one dtype.
  rt::Error (*compare)(CompareOp op, const ElementwiseDesc& d, rt::Stream stream);
  rt::Error (*compare_scalar)(CompareOp op, const ElementwiseDesc& d, Scalar rhs,
                              rt::Stream stream);
  // Operands: out, then three inputs; `value` scales Addcmul/Addcdiv.
  rt::Error (*ternary)(TernaryOp op, const ElementwiseDesc& d, Scalar value, rt::Stream stream);
  // out = mask ? value : in (operands out, mask (bool), in).
  rt::Error (*masked_fill)(const ElementwiseDesc& d, Scalar value, rt::Stream stream);
  // AMP, on float32 device scalars read by the kernel itself (no host reads):
  // grads (operands out = in, any floating dtype) *= *inv_scale, and *found_inf = 1 if any
  // element is not finite.
  rt::Error (*amp_unscale)(const ElementwiseDesc& d, float* found_inf, const float* inv_scale,
                           rt::Stream stream);
  // torch._amp_update_scale_: one-element launch over the scale (operands out = in = scale).
  rt::Error (*amp_update_scale)(const ElementwiseDesc& d, int32_t* growth_tracker,
                                const float* found_inf, double growth_factor,
                                double backoff_factor, int64_t growth_interval,
                                rt::Stream stream);
};

// The table for the driver in use (rt::driver()).
const KernelTable& table();
// The host build's table, always available (tests use it directly).
const KernelTable& hostTable();

}  // namespace accel::kernels
