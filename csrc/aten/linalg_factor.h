// The factorizations the linalg ops are built on (kernels/linalg.h), shared by the LU and
// Cholesky families (aten/lu_ops.cpp, aten/cholesky_ops.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

#include "aten/output_rules.h"

namespace accel {

// The dtypes the factorization kernels compute: float and double.
bool factorable(c10::ScalarType t);
// Batches of square matrices of such a dtype.
bool squareFactorable(const at::Tensor& A);

// Refuses an out= tensor that is not on A's device, with PyTorch's error; true otherwise (the
// out= schemas' native() checks it first).
template <class... T>
bool outsOn(const at::Tensor& A, const T&... outs) {
  (checkOutDevice(outs, A.device()), ...);
  return true;
}

// A result into an out= tensor: resized as out= tensors are (the functional form's structured
// wrapper has sized it already), then copied in.
void assignOut(at::Tensor& out, const at::Tensor& value);

// LU [.., m, n] (F-contiguous, as CPU's), pivots [.., min(m, n)] and info [..] (int32) of A,
// with partial pivoting unless `pivot` is false.
std::tuple<at::Tensor, at::Tensor, at::Tensor> luFactor(const at::Tensor& A, bool pivot);

// L (or U when `upper`) [.., n, n] with A = L L^T (U^T U), read from A's lower (upper)
// triangle, the other triangle zero, and info [..] (int32).
std::tuple<at::Tensor, at::Tensor> choleskyFactor(const at::Tensor& A, bool upper);

}  // namespace accel
