// The Cholesky family on the Cholesky kernel (kernels/linalg.h): linalg.cholesky(_ex),
// cholesky, cholesky_solve and cholesky_inverse, float and double (complex goes through the
// counted fallback). A solve is two triangular solves (linalg_solve_triangular's kernel).
#include <ATen/ops/_cholesky_solve_helper.h>
#include <ATen/ops/_linalg_check_errors.h>
#include <ATen/ops/linalg_solve_triangular.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <tuple>

#include "aten/linalg_factor.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

struct CholeskyEx {
  static bool native(const Tensor& A, bool, bool, Tensor& L, Tensor& info) {
    return outsOn(A, L, info) && squareFactorable(A) && L.scalar_type() == A.scalar_type() &&
           info.scalar_type() == at::kInt;
  }
  static std::tuple<Tensor&, Tensor&> compute(const Tensor& A, bool upper, bool check_errors,
                                              Tensor& L, Tensor& info) {
    auto [l, inf] = choleskyFactor(A, upper);
    assignOut(L, l);
    assignOut(info, inf);
    if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
    return {L, info};
  }
};

// The deprecated torch.cholesky: linalg.cholesky with its own name in the error.
Tensor cholesky(const Tensor& A, bool upper) {
  auto [l, info] = choleskyFactor(A, upper);
  at::_linalg_check_errors(info, "cholesky", A.dim() == 2);
  return l;
}

struct Cholesky {
  static bool native(const Tensor& A, bool) { return squareFactorable(A); }
  static Tensor compute(const Tensor& A, bool upper) { return cholesky(A, upper); }
};

struct CholeskyOut {
  static bool native(const Tensor& A, bool, Tensor& out) {
    return outsOn(A, out) && squareFactorable(A) && out.scalar_type() == A.scalar_type();
  }
  static Tensor& compute(const Tensor& A, bool upper, Tensor& out) {
    assignOut(out, cholesky(A, upper));
    return out;
  }
};

// X with A X = B for A = L L^T (U^T U when `upper`); cholesky_solve has broadcast the batches.
Tensor choleskySolve(const Tensor& B, const Tensor& factor, bool upper) {
  const Tensor L = upper ? factor.mT() : factor;
  const Tensor y = at::linalg_solve_triangular(L, B, /*upper=*/false);
  return at::linalg_solve_triangular(L.mT(), y, /*upper=*/true);
}

struct CholeskySolveHelper {
  static bool native(const Tensor& B, const Tensor& A, bool) {
    return squareFactorable(A) && B.scalar_type() == A.scalar_type() && B.device() == A.device();
  }
  static Tensor compute(const Tensor& B, const Tensor& A, bool upper) {
    return choleskySolve(B, A, upper);
  }
};

struct CholeskyInverse {
  static bool native(const Tensor& L, bool) { return squareFactorable(L); }
  static Tensor compute(const Tensor& L, bool upper) {
    return choleskySolve(identityColumns(L, L.size(-1), L.size(-1)), L, upper);
  }
};

struct CholeskyInverseOut {
  static bool native(const Tensor& L, bool, Tensor& out) {
    return outsOn(L, out) && squareFactorable(L) && out.scalar_type() == L.scalar_type();
  }
  static Tensor& compute(const Tensor& L, bool upper, Tensor& out) {
    assignOut(out, choleskySolve(identityColumns(L, L.size(-1), L.size(-1)), L, upper));
    return out;
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<CholeskyEx>(m, "linalg_cholesky_ex.L");
  registerNative<Cholesky>(m, "cholesky");
  registerNative<CholeskyOut>(m, "cholesky.out");
  registerNative<CholeskySolveHelper>(m, "_cholesky_solve_helper");
  registerNative<CholeskyInverse>(m, "cholesky_inverse");
  registerNative<CholeskyInverseOut>(m, "cholesky_inverse.out");
}

}  // namespace
}  // namespace accel
