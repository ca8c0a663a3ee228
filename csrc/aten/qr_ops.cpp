// The QR family on the Householder kernels (kernels/linalg.h): geqrf, linalg.qr (every mode),
// linalg.householder_product (orgqr) and ormqr, float and double (complex goes through the
// counted fallback), with LAPACK's conventions (R above the diagonal, the reflectors' vectors
// below with an implicit 1, tau). Q is formed by applying the reflectors to the identity's
// columns, the last one first.
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <string_view>
#include <tuple>

#include "aten/linalg_factor.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// Q's first `cols` columns from the reflectors in a [.., m, *] and tau.
Tensor formQ(const Tensor& a, const Tensor& tau, int64_t cols) {
  Tensor q = identityColumns(a, a.size(-2), cols);
  applyReflectors(a, tau, q, /*backward=*/true, /*from_diagonal=*/true);
  return q;
}

struct Geqrf {
  static bool native(const Tensor& A) { return A.dim() >= 2 && factorable(A.scalar_type()); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& A) { return qrFactor(A); }
};

struct GeqrfOut {
  static bool native(const Tensor& A, Tensor& a, Tensor& tau) {
    return outsOn(A, a, tau) && Geqrf::native(A) && a.scalar_type() == A.scalar_type() &&
           tau.scalar_type() == A.scalar_type();
  }
  static std::tuple<Tensor&, Tensor&> compute(const Tensor& A, Tensor& a, Tensor& tau) {
    auto [qr, t] = qrFactor(A);
    assignOut(a, qr);
    assignOut(tau, t);
    return {a, tau};
  }
};

// CPU's checks pass: input [.., m, n] with m >= n, tau [.., k <= n], the same batch.
bool householderArgs(const Tensor& input, const Tensor& tau) {
  return input.dim() >= 2 && factorable(input.scalar_type()) &&
         tau.scalar_type() == input.scalar_type() && tau.dim() == input.dim() - 1 &&
         input.size(-2) >= input.size(-1) && tau.size(-1) <= input.size(-1) &&
         batchSizes(tau, 1) == batchSizes(input) && input.device() == tau.device();
}

struct HouseholderProduct {
  static bool native(const Tensor& input, const Tensor& tau) { return householderArgs(input, tau); }
  static Tensor compute(const Tensor& input, const Tensor& tau) {
    return formQ(input, tau, input.size(-1));
  }
};

struct HouseholderProductOut {
  static bool native(const Tensor& input, const Tensor& tau, Tensor& out) {
    return outsOn(input, out) && householderArgs(input, tau) &&
           out.scalar_type() == input.scalar_type();
  }
  static Tensor& compute(const Tensor& input, const Tensor& tau, Tensor& out) {
    assignOut(out, formQ(input, tau, input.size(-1)));
    return out;
  }
};

// op(Q) C (left) or C op(Q) with Q = H_0 ... H_{k-1}: C Q is (Q^T C^T)^T, so the right side
// applies the reflectors to C^T in the other order.
Tensor applyQ(const Tensor& input, const Tensor& tau, const Tensor& other, bool left,
              bool transpose) {
  Tensor c = other.clone(at::MemoryFormat::Contiguous);
  applyReflectors(input, tau, left ? c : c.mT(), /*backward=*/left != transpose,
                  /*from_diagonal=*/false);
  return c;
}

bool ormqrArgs(const Tensor& input, const Tensor& tau, const Tensor& other, bool left) {
  return input.dim() >= 2 && other.dim() == input.dim() && factorable(input.scalar_type()) &&
         tau.scalar_type() == input.scalar_type() && other.scalar_type() == input.scalar_type() &&
         tau.dim() == input.dim() - 1 && tau.size(-1) <= input.size(-1) &&
         input.size(-2) == (left ? other.size(-2) : other.size(-1)) &&
         tau.size(-1) <= input.size(-2) && batchSizes(tau, 1) == batchSizes(input) &&
         batchSizes(other) == batchSizes(input) && input.device() == tau.device() &&
         input.device() == other.device();
}

struct Ormqr {
  static bool native(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool) {
    return ormqrArgs(input, tau, other, left);
  }
  static Tensor compute(const Tensor& input, const Tensor& tau, const Tensor& other, bool left,
                        bool transpose) {
    return applyQ(input, tau, other, left, transpose);
  }
};

struct OrmqrOut {
  static bool native(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool,
                     Tensor& out) {
    return outsOn(input, out) && ormqrArgs(input, tau, other, left) &&
           out.scalar_type() == input.scalar_type();
  }
  static Tensor& compute(const Tensor& input, const Tensor& tau, const Tensor& other, bool left,
                         bool transpose, Tensor& out) {
    assignOut(out, applyQ(input, tau, other, left, transpose));
    return out;
  }
};

struct LinalgQr {
  static bool native(const Tensor& A, std::string_view mode, Tensor& Q, Tensor& R) {
    return outsOn(A, Q, R) && A.dim() >= 2 && factorable(A.scalar_type()) &&
           (mode == "reduced" || mode == "complete" || mode == "r") &&
           Q.scalar_type() == A.scalar_type() && R.scalar_type() == A.scalar_type();
  }
  static std::tuple<Tensor&, Tensor&> compute(const Tensor& A, std::string_view mode, Tensor& Q,
                                              Tensor& R) {
    const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
    auto [a, tau] = qrFactor(A);
    const bool complete = mode == "complete";
    assignOut(R, a.narrow(-2, 0, complete ? m : k).triu());
    if (mode == "r") {
      assignOut(Q, at::empty({0}, A.options()));
    } else {
      assignOut(Q, formQ(a, tau, complete ? m : k));
    }
    return {Q, R};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<Geqrf>(m, "geqrf");
  registerNative<GeqrfOut>(m, "geqrf.a");
  registerNative<HouseholderProduct>(m, "linalg_householder_product");
  registerNative<HouseholderProductOut>(m, "linalg_householder_product.out");
  registerNative<Ormqr>(m, "ormqr");
  registerNative<OrmqrOut>(m, "ormqr.out");
  registerNative<LinalgQr>(m, "linalg_qr.out");
}

}  // namespace
}  // namespace accel
