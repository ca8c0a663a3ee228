#include "aten/linalg_factor.h"

#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/linalg_solve_triangular.h>
#include <ATen/ops/zeros.h>

#include <algorithm>

#include "aten/elementwise_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/linalg.h"

namespace accel {

bool factorable(c10::ScalarType t) { return t == at::kFloat || t == at::kDouble; }

bool squareFactorable(const at::Tensor& A) {
  return A.dim() >= 2 && A.size(-1) == A.size(-2) && factorable(A.scalar_type());
}

void assignOut(at::Tensor& out, const at::Tensor& value) {
  into(Output(Output::Form::Out, out), value);
}

c10::DimVector batchSizes(const at::Tensor& t, int64_t matrix_dims,
                          std::initializer_list<int64_t> append) {
  c10::DimVector sizes(t.sizes().begin(), t.sizes().end() - matrix_dims);
  sizes.append(append.begin(), append.end());
  return sizes;
}

void exchangeRows(const at::Tensor& x, const at::Tensor& pivots, int64_t first, int64_t swaps,
                  bool reverse) {
  if (x.numel() == 0 || swaps == 0) return;
  kernels::RowSwapDesc s;
  s.dtype = toKernelDType(x.scalar_type());
  s.batch = x.size(0);
  s.n = x.size(1);
  s.cols = x.size(2);
  s.first = first;
  s.swaps = swaps;
  s.pivots = pivots.const_data_ptr<int32_t>() + first;
  s.pivot_stride = pivots.size(1);
  s.x = static_cast<char*>(x.data_ptr());
  s.x_batch = x.stride(0);
  s.x_row = x.stride(1);
  s.x_col = x.stride(2);
  s.reverse = reverse;
  const int device = x.device().index();
  ACCEL_RT_CHECK(kernels::linalgTable().rowSwaps(s, currentRuntimeStream(device)), device);
}

namespace {

// A [.., m, n] as a new F-contiguous tensor (each matrix column-major, the batch contiguous),
// and the descriptor fields of its flattened batch.
at::Tensor columnMajorCopy(const at::Tensor& A, kernels::LuDesc& d) {
  c10::DimVector sizes(A.sizes().begin(), A.sizes().end());
  std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
  at::Tensor t = at::empty(sizes, A.options()).mT();
  t.copy_(A);
  d.dtype = toKernelDType(A.scalar_type());
  d.m = A.size(-2);
  d.n = A.size(-1);
  d.batch = d.m * d.n == 0 ? 0 : A.numel() / (d.m * d.n);
  d.a = static_cast<char*>(t.mutable_data_ptr());
  d.a_batch = d.m * d.n;
  d.a_row = 1;
  d.a_col = d.m;
  return t;
}

// Columns per panel. The steps inside a panel are 2 small launches each; the matrix right of a
// panel is updated by one GEMM per panel (the BLAS table), where the bulk of the work of a
// large factorization goes.
constexpr int64_t kPanel = 64;

// The factor in panels: each panel's steps (`steps` launches them), then the rest of the matrix.
// a is the F-contiguous [batch, m, n] the descriptor points into; pivots [batch, min(m, n)]
// (an LU's: its steps exchange rows inside the panel, the columns outside it follow here).
template <class Steps>
void factorInPanels(kernels::LuDesc d, const at::Tensor& a, const at::Tensor& pivots, bool cholesky,
                    Steps steps) {
  const int64_t total = d.steps();
  for (int64_t j0 = 0; j0 < total; j0 += kPanel) {
    const int64_t jb = std::min(kPanel, total - j0), below = d.m - j0 - jb, right = d.n - j0 - jb;
    d.panel_begin = j0;
    d.panel_end = j0 + jb;
    steps(d);
    if (!cholesky && d.pivot) {
      exchangeRows(a.narrow(2, 0, j0), pivots, j0, jb, false);
      exchangeRows(a.narrow(2, j0 + jb, right), pivots, j0, jb, false);
    }
    if (right == 0) continue;
    const at::Tensor panel_rows = a.narrow(1, j0, jb), lower = a.narrow(1, j0 + jb, below);
    if (cholesky) {  // A22 -= L21 L21^T (the whole block: the lower triangle is what is read)
      const at::Tensor l21 = lower.narrow(2, j0, jb);
      lower.narrow(2, j0 + jb, right).baddbmm_(l21, l21.mT(), 1, -1);
      continue;
    }
    // U12 = L11^-1 A12, then A22 -= L21 U12.
    at::Tensor a12 = panel_rows.narrow(2, j0 + jb, right);
    a12.copy_(at::linalg_solve_triangular(panel_rows.narrow(2, j0, jb), a12, /*upper=*/false,
                                          /*left=*/true, /*unitriangular=*/true));
    if (below > 0) lower.narrow(2, j0 + jb, right).baddbmm_(lower.narrow(2, j0, jb), a12, 1, -1);
  }
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> luFactor(const at::Tensor& A, bool pivot) {
  kernels::LuDesc d;
  at::Tensor lu = columnMajorCopy(A, d);
  const auto ints = A.options().dtype(at::kInt);
  at::Tensor pivots = at::empty(batchSizes(A, 2, {std::min(d.m, d.n)}), ints);
  at::Tensor info = at::zeros(batchSizes(A), ints);
  d.pivots = pivots.mutable_data_ptr<int32_t>();
  d.info = info.mutable_data_ptr<int32_t>();
  d.pivot = pivot;
  const int device = A.device().index();
  const at::Tensor pivots2 = pivots.view({d.batch, std::min(d.m, d.n)});
  factorInPanels(
      d, lu.view({d.batch, d.m, d.n}), pivots2, false, [&](const kernels::LuDesc& panel) {
        ACCEL_RT_CHECK(kernels::linalgTable().luFactor(panel, currentRuntimeStream(device)),
                       device);
      });
  return {lu, pivots, info};
}

std::tuple<at::Tensor, at::Tensor> choleskyFactor(const at::Tensor& A, bool upper) {
  // U^T U = A is L L^T for A^T, whose lower triangle is A's upper one.
  kernels::LuDesc d;
  at::Tensor l = columnMajorCopy(upper ? A.mT() : A, d);
  at::Tensor info = at::zeros(batchSizes(A), A.options().dtype(at::kInt));
  d.info = info.mutable_data_ptr<int32_t>();
  const int device = A.device().index();
  factorInPanels(
      d, l.view({d.batch, d.n, d.n}), at::Tensor(), true, [&](const kernels::LuDesc& panel) {
        ACCEL_RT_CHECK(kernels::linalgTable().cholesky(panel, currentRuntimeStream(device)),
                       device);
      });
  l.tril_();
  return {upper ? l.mT() : l, info};
}

namespace {

// The descriptor fields of reflectors a [B, m, *], tau [B, k] (contiguous) and x [B, m, c].
kernels::HouseholderDesc householder(const at::Tensor& a, const at::Tensor& tau,
                                     const at::Tensor& x) {
  kernels::HouseholderDesc d;
  d.dtype = toKernelDType(a.scalar_type());
  d.batch = a.size(0);
  d.m = a.size(1);
  d.a = static_cast<char*>(a.mutable_data_ptr());
  d.a_batch = a.stride(0);
  d.a_row = a.stride(1);
  d.a_col = a.stride(2);
  d.tau = static_cast<char*>(tau.mutable_data_ptr());
  d.tau_batch = tau.size(1);
  d.x = static_cast<char*>(x.mutable_data_ptr());
  d.x_batch = x.stride(0);
  d.x_row = x.stride(1);
  d.x_col = x.stride(2);
  return d;
}

}  // namespace

at::Tensor identityColumns(const at::Tensor& A, int64_t m, int64_t cols) {
  at::Tensor eye = at::zeros(batchSizes(A, 2, {m, cols}), A.options());
  eye.diagonal(0, -2, -1).fill_(1);
  return eye;
}

namespace {

// The block of reflectors j0 .. j0 + jb - 1 stored in a3 [B, m, *] (tau2 [B, k]) applied to
// x [B, m - j0, c] (rows j0 and below of the matrix it acts on): (I - V T V^T) x, or with T^T
// when `transposed` (the block's product in the other order). V is the block's unit lower
// trapezoid; G = V^T V, T (LAPACK's larft) and the products are GEMMs through the BLAS table.
void applyBlock(const at::Tensor& a3, const at::Tensor& tau2, int64_t j0, int64_t jb,
                const at::Tensor& x, bool transposed) {
  at::Tensor v = a3.narrow(1, j0, a3.size(1) - j0).narrow(2, j0, jb).tril(-1);
  v.diagonal(0, -2, -1).fill_(1);
  const at::Tensor g = at::bmm(v.mT(), v).contiguous();
  at::Tensor t = at::zeros_like(g);
  const at::Tensor tau = tau2.narrow(1, j0, jb);
  kernels::TriangularFactorDesc d;
  d.dtype = toKernelDType(a3.scalar_type());
  d.batch = a3.size(0);
  d.nb = jb;
  d.g = static_cast<const char*>(g.const_data_ptr());
  d.t = static_cast<char*>(t.mutable_data_ptr());
  d.tau = static_cast<const char*>(tau.const_data_ptr());
  d.tau_batch = tau2.stride(0);
  const int device = a3.device().index();
  ACCEL_RT_CHECK(kernels::linalgTable().triangularFactor(d, currentRuntimeStream(device)), device);
  const at::Tensor w = at::bmm(transposed ? t.mT() : t, at::bmm(v.mT(), x));
  x.baddbmm_(v, w, 1, -1);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> qrFactor(const at::Tensor& A) {
  kernels::LuDesc shape;
  at::Tensor a = columnMajorCopy(A, shape);
  const int64_t m = shape.m, n = shape.n, k = std::min(m, n);
  at::Tensor tau = at::empty(batchSizes(A, 2, {k}), A.options());
  if (shape.batch == 0 || k == 0) return {a, tau};
  const at::Tensor a3 = a.view({shape.batch, m, n}), tau2 = tau.view({shape.batch, k});
  kernels::HouseholderDesc d = householder(a3, tau2, a3);
  const int device = A.device().index();
  const rt::Stream stream = currentRuntimeStream(device);
  // Panels as the LU's: the reflectors one by one inside, the rest of the matrix by blocks.
  for (int64_t j0 = 0; j0 < k; j0 += kPanel) {
    const int64_t jb = std::min(kPanel, k - j0), right = n - j0 - jb;
    for (d.k = j0; d.k < j0 + jb; ++d.k) {
      ACCEL_RT_CHECK(kernels::linalgTable().reflector(d, stream), device);
      d.col_begin = d.k + 1;
      d.col_end = j0 + jb;
      if (d.col_begin < d.col_end)
        ACCEL_RT_CHECK(kernels::linalgTable().applyReflector(d, stream), device);
    }
    if (right > 0)  // Q_block^T: H_0 first
      applyBlock(a3, tau2, j0, jb, a3.narrow(1, j0, m - j0).narrow(2, j0 + jb, right), true);
  }
  return {a, tau};
}

void applyReflectors(const at::Tensor& a, const at::Tensor& tau, const at::Tensor& x, bool backward,
                     bool from_diagonal) {
  const int64_t m = x.size(-2), c = x.size(-1), k = tau.size(-1);
  if (x.numel() == 0 || k == 0) return;
  const at::Tensor x3 = x.view({-1, m, c});
  const int64_t batch = x3.size(0);
  const at::Tensor a3 = a.reshape({batch, m, a.size(-1)});
  const at::Tensor tau2 = tau.reshape({batch, k}).contiguous();
  if (k <= kPanel) {
    // One panel's worth: reflector by reflector, each dot product in double (as geqrf's panel).
    kernels::HouseholderDesc d = householder(a3, tau2, x3);
    const int device = x.device().index();
    const rt::Stream stream = currentRuntimeStream(device);
    for (int64_t s = 0; s < k; ++s) {
      d.k = backward ? k - 1 - s : s;
      d.col_begin = from_diagonal ? d.k : 0;
      d.col_end = c;
      ACCEL_RT_CHECK(kernels::linalgTable().applyReflector(d, stream), device);
    }
    return;
  }
  // Blocks of a panel's reflectors, as LAPACK's larfb. Backward: Q = (block 0) (block 1) ...,
  // the last block applied first, each I - V T V^T; forward: Q^T, each block transposed.
  const int64_t panels = (k + kPanel - 1) / kPanel;
  for (int64_t s = 0; s < panels; ++s) {
    const int64_t j0 = (backward ? panels - 1 - s : s) * kPanel, jb = std::min(kPanel, k - j0);
    const int64_t first = from_diagonal ? j0 : 0;
    applyBlock(a3, tau2, j0, jb, x3.narrow(1, j0, m - j0).narrow(2, first, c - first), !backward);
  }
}

}  // namespace accel
