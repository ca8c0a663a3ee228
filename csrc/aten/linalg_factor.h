// The factorizations the linalg ops are built on (kernels/linalg.h) and the helpers their ops
// share: the LU, Cholesky and QR families (aten/lu_ops.cpp, cholesky_ops.cpp, qr_ops.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
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

// A result into an out= tensor, under the out= rules (output_rules.h's `into`: device, resize,
// dtype); the functional form's structured wrapper has sized it already.
void assignOut(at::Tensor& out, const at::Tensor& value);

// t's batch sizes: all but its last `matrix_dims` sizes, then `append` (rows, columns, ...).
c10::DimVector batchSizes(const at::Tensor& t, int64_t matrix_dims = 2,
                          std::initializer_list<int64_t> append = {});

// The row exchanges of `swaps` pivots applied to x [B, n, c] (any strides, in place): swap s
// exchanges row first + s with row pivots[b, s] - 1 (pivots [B, *] contiguous, int32, from
// their first column); in order that is P^T x as getrs applies it, `reverse` gives P x.
void exchangeRows(const at::Tensor& x, const at::Tensor& pivots, int64_t first, int64_t swaps,
                  bool reverse);

// LU [.., m, n] (F-contiguous, as CPU's), pivots [.., min(m, n)] and info [..] (int32) of A,
// with partial pivoting unless `pivot` is false.
std::tuple<at::Tensor, at::Tensor, at::Tensor> luFactor(const at::Tensor& A, bool pivot);

// L (or U when `upper`) [.., n, n] with A = L L^T (U^T U), read from A's lower (upper)
// triangle, the other triangle zero, and info [..] (int32).
std::tuple<at::Tensor, at::Tensor> choleskyFactor(const at::Tensor& A, bool upper);

// The first `cols` columns of the m x m identity, for each of A's batch (A's dtype and device).
at::Tensor identityColumns(const at::Tensor& A, int64_t m, int64_t cols);

// The Householder QR of A [.., m, n] (LAPACK's geqrf): a (F-contiguous: R on and above the
// diagonal, the reflectors' vectors below) and tau [.., min(m, n)].
std::tuple<at::Tensor, at::Tensor> qrFactor(const at::Tensor& A);

// x [.., m, c] (any strides, written in place) times the reflectors H_0 .. H_{k-1} stored in
// a [.., m, *] and tau [.., k], batches alike: H_0 H_1 ... x (`backward`: the last reflector
// applied first), else ... H_1 H_0 x. `from_diagonal`: reflector i only reaches columns >= i
// of x (x starts as the identity's columns, as when Q is formed).
void applyReflectors(const at::Tensor& a, const at::Tensor& tau, const at::Tensor& x, bool backward,
                     bool from_diagonal);

}  // namespace accel
