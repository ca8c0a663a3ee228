// The LU family on the LU kernels (kernels/linalg.h): linalg.lu_factor(_ex), linalg.lu_solve,
// linalg.solve(_ex), linalg.inv(_ex), det / slogdet, lu_unpack and linalg.lu, float and double
// (complex goes through the counted fallback). Each registers its out= schema: the functional
// form is PyTorch's structured wrapper, which sizes the outputs and calls it.
//
// The factor is CPU's: partial pivoting, LAPACK's 1-based pivots and info, LU F-contiguous.
// A solve applies the pivots' row exchanges, then the unit lower and the upper triangular solves
// (linalg_solve_triangular's kernel reads one triangle of LU each). solve, det and slogdet
// return the factor of the matrix CPU factors (A or A^T, probed): their backward formulas read
// LU and pivots with that convention.
#include <ATen/ExpandUtils.h>
#include <ATen/ops/_linalg_check_errors.h>
#include <ATen/ops/_linalg_det.h>
#include <ATen/ops/_linalg_slogdet.h>
#include <ATen/ops/_linalg_solve_ex.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_solve_triangular.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <tuple>

#include "aten/linalg_factor.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// Whether two batch shapes broadcast.
bool broadcastable(c10::IntArrayRef a, c10::IntArrayRef b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

c10::DimVector withMatrix(c10::IntArrayRef batch, int64_t rows, int64_t cols) {
  c10::DimVector sizes(batch.begin(), batch.end());
  sizes.append({rows, cols});
  return sizes;
}

// P^T X (reverse: P X) for X [batch, n, cols] contiguous, pivots [batch, swaps] contiguous.
void rowSwaps(const Tensor& x, const Tensor& pivots, bool reverse) {
  const int64_t swaps = pivots.size(-1);
  if (x.numel() == 0 || swaps == 0) return;
  exchangeRows(x.view({-1, x.size(-2), x.size(-1)}), pivots.reshape({-1, swaps}), 0, swaps,
               reverse);
}

// X with A X = B (adjoint: A^T X = B) from A's LU [batch, n, n] and pivots [batch, n]
// (contiguous), B [batch, n, cols]: a new contiguous tensor.
Tensor luSolve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint) {
  Tensor x = b.contiguous();
  if (x.numel() == 0) return x.clone();
  if (x.is_same(b)) x = b.clone();
  if (!adjoint) {
    rowSwaps(x, pivots, false);
    x = at::linalg_solve_triangular(lu, x, /*upper=*/false, /*left=*/true, /*unitriangular=*/true);
    return at::linalg_solve_triangular(lu, x, /*upper=*/true);
  }
  x = at::linalg_solve_triangular(lu.mT(), x, /*upper=*/false);
  x = at::linalg_solve_triangular(lu.mT(), x, /*upper=*/true, /*left=*/true,
                                  /*unitriangular=*/true)
          .contiguous();
  rowSwaps(x, pivots, true);
  return x;
}

// linalg.lu_solve's result for LU [.., n, n], pivots [.., n] and B, batches broadcast.
Tensor solveWithLu(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                   bool adjoint) {
  const Tensor b = left ? B : B.mT();  // X A = B is A^T X^T = B^T
  if (!left) adjoint = !adjoint;
  const int64_t n = LU.size(-1), cols = b.size(-1);
  const std::vector<int64_t> batch = at::infer_size(batchSizes(b), batchSizes(LU));
  const c10::DimVector sizes = withMatrix(batch, n, cols);
  if (c10::multiply_integers(sizes) == 0) {
    const Tensor x = at::empty(sizes, b.options());
    return left ? x : x.mT();
  }
  const Tensor lu = LU.expand(withMatrix(batch, n, n)).reshape({-1, n, n});
  c10::DimVector piv_sizes(batch.begin(), batch.end());
  piv_sizes.push_back(n);
  const Tensor piv = pivots.expand(piv_sizes).reshape({-1, n}).contiguous();
  const Tensor x = luSolve(lu, piv, b.expand(sizes).reshape({-1, n, cols}), adjoint).view(sizes);
  return left ? x : x.mT();
}

bool sameDevice(const Tensor& a, const Tensor& b) { return a.device() == b.device(); }

struct LuFactorEx {
  static bool native(const Tensor& A, bool, bool, Tensor& LU, Tensor& pivots, Tensor& info) {
    return outsOn(A, LU, pivots, info) && A.dim() >= 2 && factorable(A.scalar_type()) &&
           LU.scalar_type() == A.scalar_type() && pivots.scalar_type() == at::kInt &&
           info.scalar_type() == at::kInt;
  }
  static std::tuple<Tensor&, Tensor&, Tensor&> compute(const Tensor& A, bool pivot,
                                                       bool check_errors, Tensor& LU,
                                                       Tensor& pivots, Tensor& info) {
    auto [lu, piv, inf] = luFactor(A, pivot);
    assignOut(LU, lu);
    assignOut(pivots, piv);
    assignOut(info, inf);
    if (check_errors) at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
    return {LU, pivots, info};
  }
};

struct LuSolve {
  static bool native(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool,
                     Tensor& result) {
    outsOn(LU, result);
    if (!squareFactorable(LU) || B.dim() < 2 || B.scalar_type() != LU.scalar_type()) return false;
    if (pivots.scalar_type() != at::kInt || !pivots.sizes().equals(batchSizes(LU, 1))) return false;
    const int64_t n = LU.size(-1);
    return (left ? B.size(-2) : B.size(-1)) == n && broadcastable(batchSizes(B), batchSizes(LU)) &&
           sameDevice(LU, B) && sameDevice(LU, pivots) && result.scalar_type() == B.scalar_type();
  }
  static Tensor& compute(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                         bool adjoint, Tensor& result) {
    assignOut(result, solveWithLu(LU, pivots, B, left, adjoint));
    return result;
  }
};

// linalg.solve's [numpy-compat] vector right-hand side: B is A's shape without its last
// dimension (or 1-D).
bool vectorRhs(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (A.dim() - 1 == B.dim() && B.sizes().equals(batchSizes(A, 1)));
}

// Which matrix CPU's solve, det and slogdet factor, which their backward formulas assume:
// A^T when A is contiguous (saves a copy into LAPACK's column-major order) in some torch
// versions, A itself in others. Probed once per op on a 2 x 2 matrix whose two factors differ.
enum class Factored { Solve, Det, Slogdet };
bool cpuFactorsTranspose(Factored op) {
  auto probe = [](Factored which) {
    const Tensor a = at::arange(1, 5, at::TensorOptions().dtype(at::kDouble)).view({2, 2});
    Tensor lu;
    switch (which) {
      case Factored::Solve: lu = std::get<1>(at::_linalg_solve_ex(a, a)); break;
      case Factored::Det: lu = std::get<1>(at::_linalg_det(a)); break;
      case Factored::Slogdet: lu = std::get<2>(at::_linalg_slogdet(a)); break;
    }
    return lu[0][0].item<double>() == 2.0;  // A^T = [[1, 3], [2, 4]] pivots on 2; A on 3
  };
  static const bool solve = probe(Factored::Solve), det = probe(Factored::Det),
                    slogdet = probe(Factored::Slogdet);
  return op == Factored::Solve ? solve : op == Factored::Det ? det : slogdet;
}

// A's factor as CPU's op computes it, and whether it is of A^T.
std::tuple<Tensor, Tensor, Tensor, bool> factorAsCpu(const Tensor& A, Factored op) {
  const bool use_A_T = A.is_contiguous() && cpuFactorsTranspose(op);
  auto [lu, piv, info] = luFactor(use_A_T ? A.mT() : A, true);
  return {lu, piv, info, use_A_T};
}

struct SolveEx {
  static bool native(const Tensor& A, const Tensor& B, bool left, bool, Tensor& result, Tensor& LU,
                     Tensor& pivots, Tensor& info) {
    outsOn(A, result, LU, pivots, info);
    if (!squareFactorable(A) || B.scalar_type() != A.scalar_type() || !sameDevice(A, B))
      return false;
    const bool vector = vectorRhs(A, B);
    if (!vector && B.dim() < 2) return false;
    if (vector && !left) return false;  // CPU's error
    const int64_t n = A.size(-1);
    const int64_t rhs = vector ? B.size(-1) : left ? B.size(-2) : B.size(-1);
    return rhs == n && broadcastable(vector ? batchSizes(B, 1) : batchSizes(B), batchSizes(A)) &&
           result.scalar_type() == A.scalar_type() && LU.scalar_type() == A.scalar_type() &&
           pivots.scalar_type() == at::kInt && info.scalar_type() == at::kInt;
  }
  static std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> compute(const Tensor& A, const Tensor& B,
                                                                bool left, bool check_errors,
                                                                Tensor& result, Tensor& LU,
                                                                Tensor& pivots, Tensor& info) {
    auto [lu, piv, inf, use_A_T] = factorAsCpu(A, Factored::Solve);
    if (check_errors) at::_linalg_check_errors(inf, "torch.linalg.solve_ex", A.dim() == 2);
    const bool vector = vectorRhs(lu, B);
    Tensor x = solveWithLu(lu, piv, vector ? B.unsqueeze(-1) : B, left, use_A_T);
    assignOut(result, vector ? x.squeeze(-1) : x);
    assignOut(LU, lu);
    assignOut(pivots, piv);
    assignOut(info, inf);
    return {result, LU, pivots, info};
  }
};

struct InvEx {
  static bool native(const Tensor& A, bool, Tensor& inverse, Tensor& info) {
    return outsOn(A, inverse, info) && squareFactorable(A) &&
           inverse.scalar_type() == A.scalar_type() && info.scalar_type() == at::kInt;
  }
  static std::tuple<Tensor&, Tensor&> compute(const Tensor& A, bool check_errors, Tensor& inverse,
                                              Tensor& info) {
    // As solve's: info names the same zero pivot as CPU's.
    auto [lu, piv, inf, use_A_T] = factorAsCpu(A, Factored::Solve);
    const Tensor eye = identityColumns(A, A.size(-1), A.size(-1));
    assignOut(inverse, solveWithLu(lu, piv, eye, true, use_A_T));
    assignOut(info, inf);
    if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
    return {inverse, info};
  }
};

// The sign of the permutation of pivots [.., k]: (-1)^(rows exchanged), as int64.
Tensor permutationSign(const Tensor& pivots) {
  const int64_t k = pivots.size(-1);
  return at::ne(at::arange(1, k + 1, pivots.options()), pivots)
      .sum(-1, false, at::kLong)
      .fmod_(2)
      .mul_(-2)
      .add_(1);
}

struct Det {
  static bool native(const Tensor& A, Tensor& result, Tensor& LU, Tensor& pivots) {
    return outsOn(A, result, LU, pivots) && squareFactorable(A) &&
           result.scalar_type() == A.scalar_type() && LU.scalar_type() == A.scalar_type() &&
           pivots.scalar_type() == at::kInt;
  }
  static std::tuple<Tensor&, Tensor&, Tensor&> compute(const Tensor& A, Tensor& result, Tensor& LU,
                                                       Tensor& pivots) {
    auto [lu, piv, inf, use_A_T] = factorAsCpu(A, Factored::Det);
    assignOut(result, permutationSign(piv).mul(lu.diagonal(0, -2, -1).prod(-1)));
    assignOut(LU, lu);
    assignOut(pivots, piv);
    return {result, LU, pivots};
  }
};

struct Slogdet {
  static bool native(const Tensor& A, Tensor& sign, Tensor& logabsdet, Tensor& LU, Tensor& pivots) {
    return outsOn(A, sign, logabsdet, LU, pivots) && squareFactorable(A) &&
           sign.scalar_type() == A.scalar_type() && logabsdet.scalar_type() == A.scalar_type() &&
           LU.scalar_type() == A.scalar_type() && pivots.scalar_type() == at::kInt;
  }
  static std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> compute(const Tensor& A, Tensor& sign,
                                                                Tensor& logabsdet, Tensor& LU,
                                                                Tensor& pivots) {
    auto [lu, piv, inf, use_A_T] = factorAsCpu(A, Factored::Slogdet);
    const Tensor diag = lu.diagonal(0, -2, -1);
    assignOut(sign, diag.sgn().prod(-1).mul(permutationSign(piv)));
    assignOut(logabsdet, diag.abs().log().sum(-1));
    assignOut(LU, lu);
    assignOut(pivots, piv);
    return {sign, logabsdet, LU, pivots};
  }
};

// P, L, U of an LU [.., m, n] and its pivots [.., min(m, n)]: A = P L U. P is the identity
// with the pivots' exchanges applied in reverse order.
std::tuple<Tensor, Tensor, Tensor> unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                          bool unpack_pivots) {
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  const Tensor none = at::empty({0}, LU.options());
  Tensor P = none, L = none, U = none;
  if (unpack_data) {
    L = LU.narrow(-1, 0, k).tril(-1);
    L.diagonal(0, -2, -1).fill_(1);
    U = LU.narrow(-2, 0, k).triu();
  }
  if (unpack_pivots) {
    P = identityColumns(LU, m, m);
    rowSwaps(P, pivots.contiguous(), true);
  }
  return {P, L, U};
}

struct LuUnpack {
  static bool native(const Tensor& LU, const Tensor& pivots, bool, bool, Tensor& P, Tensor& L,
                     Tensor& U) {
    outsOn(LU, P, L, U);
    if (LU.dim() < 2 || !factorable(LU.scalar_type()) || pivots.scalar_type() != at::kInt)
      return false;
    return pivots.sizes().equals(batchSizes(LU, 2, {std::min(LU.size(-2), LU.size(-1))})) &&
           sameDevice(LU, pivots) && P.scalar_type() == LU.scalar_type() &&
           L.scalar_type() == LU.scalar_type() && U.scalar_type() == LU.scalar_type();
  }
  static std::tuple<Tensor&, Tensor&, Tensor&> compute(const Tensor& LU, const Tensor& pivots,
                                                       bool unpack_data, bool unpack_pivots,
                                                       Tensor& P, Tensor& L, Tensor& U) {
    auto [p, l, u] = unpack(LU, pivots, unpack_data, unpack_pivots);
    assignOut(P, p);
    assignOut(L, l);
    assignOut(U, u);
    return {P, L, U};
  }
};

struct Lu {
  static bool native(const Tensor& A, bool, Tensor& P, Tensor& L, Tensor& U) {
    return outsOn(A, P, L, U) && A.dim() >= 2 && factorable(A.scalar_type()) &&
           P.scalar_type() == A.scalar_type() && L.scalar_type() == A.scalar_type() &&
           U.scalar_type() == A.scalar_type();
  }
  static std::tuple<Tensor&, Tensor&, Tensor&> compute(const Tensor& A, bool pivot, Tensor& P,
                                                       Tensor& L, Tensor& U) {
    auto [lu, piv, info] = luFactor(A, pivot);
    auto [p, l, u] = unpack(lu, piv, true, pivot);
    assignOut(P, p);
    assignOut(L, l);
    assignOut(U, u);
    return {P, L, U};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<LuFactorEx>(m, "linalg_lu_factor_ex.out");
  registerNative<LuSolve>(m, "linalg_lu_solve.out");
  registerNative<SolveEx>(m, "_linalg_solve_ex.result");
  registerNative<InvEx>(m, "linalg_inv_ex.inverse");
  registerNative<Det>(m, "_linalg_det.result");
  registerNative<Slogdet>(m, "_linalg_slogdet.sign");
  registerNative<LuUnpack>(m, "lu_unpack.out");
  registerNative<Lu>(m, "linalg_lu.out");
}

}  // namespace
}  // namespace accel
