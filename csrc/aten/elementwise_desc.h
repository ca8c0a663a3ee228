// Turns a built TensorIterator into the kernel ABI's plain descriptor.
#pragma once

#include <ATen/TensorIterator.h>

#include "kernels/abi.h"

namespace accel {

// Whether the kernel library handles this dtype (complex, float8, ... do not).
bool kernelSupports(c10::ScalarType t);
kernels::DType toKernelDType(c10::ScalarType t);
kernels::ElementwiseDesc makeDesc(const at::TensorIteratorBase& iter);
kernels::Scalar toKernelScalar(const c10::Scalar& s);

}  // namespace accel
