// Turns a built TensorIterator into the kernel ABI's plain descriptor.
#pragma once

#include <ATen/TensorIterator.h>

#include "kernels/abi.h"

namespace accel {

// Whether every kernel family handles this dtype (the real dtypes; complex, float8, ... not).
bool kernelSupports(c10::ScalarType t);
// Whether t is a complex dtype the elementwise families that take complex know (complex32,
// complex64, complex128); each op's native() says which of them it computes.
bool kernelSupportsComplex(c10::ScalarType t);
// complex64 or complex128: what the composites over a complex tensor's real view or parts
// take (complex32 has too few ops to compose from).
bool complexFloatOrDouble(c10::ScalarType t);
// kernelSupports(t) or kernelSupportsComplex(t).
bool kernelKnows(c10::ScalarType t);
kernels::DType toKernelDType(c10::ScalarType t);
// The operands' dtypes may be complex: the elementwise launchers refuse what they do not take.
kernels::ElementwiseDesc makeDesc(const at::TensorIteratorBase& iter);
// A one-dimensional descriptor over operands of one length, operand k = ts[k] (the first is the
// written one): each 1-D (any stride) or contiguous (taken flat). No TensorIterator: for callers
// that checked that already.
kernels::ElementwiseDesc flatDesc(c10::ArrayRef<const at::Tensor*> ts);
// A real scalar (refuses a complex one); toKernelComplexScalar also carries the imaginary part,
// for the kernels that compute in complex.
kernels::Scalar toKernelScalar(const c10::Scalar& s);
kernels::Scalar toKernelComplexScalar(const c10::Scalar& s);

}  // namespace accel
