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

enum class BinaryOp : int { Add, Sub, Mul, Div };

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
};

// The table for the driver in use (rt::driver()).
const KernelTable& table();
// The host build's table, always available (tests use it directly).
const KernelTable& hostTable();

}  // namespace accel::kernels
