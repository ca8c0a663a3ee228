#include "aten/linalg_factor.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_solve_triangular.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <optional>

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
  at::native::resize_output(out, value.sizes());
  out.copy_(value);
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

// The row exchanges of the panel at columns [j0, j0 + jb) applied to `count` columns of the
// LU from column `begin`: the panel's steps exchanged rows inside the panel only.
void exchangeRowsOutsidePanel(const kernels::LuDesc& d, int64_t j0, int64_t jb, int64_t begin,
                              int64_t count, int device) {
  if (count == 0) return;
  kernels::RowSwapDesc s;
  s.dtype = d.dtype;
  s.batch = d.batch;
  s.n = d.m;
  s.cols = count;
  s.first = j0;
  s.swaps = jb;
  s.pivots = d.pivots + j0;
  s.pivot_stride = d.steps();
  s.x = d.a + begin * d.a_col * kernels::elementSize(d.dtype);
  s.x_batch = d.a_batch;
  s.x_row = d.a_row;
  s.x_col = d.a_col;
  ACCEL_RT_CHECK(kernels::linalgTable().rowSwaps(s, currentRuntimeStream(device)), device);
}

// The factor in panels: each panel's steps (`steps` launches them), then the rest of the matrix.
// a is the F-contiguous [batch, m, n] the descriptor points into.
template <class Steps>
void factorInPanels(kernels::LuDesc d, const at::Tensor& a, bool cholesky, Steps steps) {
  const int64_t total = d.steps();
  const int device = a.device().index();
  for (int64_t j0 = 0; j0 < total; j0 += kPanel) {
    const int64_t jb = std::min(kPanel, total - j0), below = d.m - j0 - jb, right = d.n - j0 - jb;
    d.panel_begin = j0;
    d.panel_end = j0 + jb;
    steps(d);
    if (!cholesky && d.pivot) {
      exchangeRowsOutsidePanel(d, j0, jb, 0, j0, device);
      exchangeRowsOutsidePanel(d, j0, jb, j0 + jb, right, device);
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

c10::DimVector batchWith(const at::Tensor& A, std::optional<int64_t> last) {
  c10::DimVector sizes(A.sizes().begin(), A.sizes().end() - 2);
  if (last) sizes.push_back(*last);
  return sizes;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> luFactor(const at::Tensor& A, bool pivot) {
  kernels::LuDesc d;
  at::Tensor lu = columnMajorCopy(A, d);
  const auto ints = A.options().dtype(at::kInt);
  at::Tensor pivots = at::empty(batchWith(A, std::min(d.m, d.n)), ints);
  at::Tensor info = at::zeros(batchWith(A, std::nullopt), ints);
  d.pivots = pivots.mutable_data_ptr<int32_t>();
  d.info = info.mutable_data_ptr<int32_t>();
  d.pivot = pivot;
  const int device = A.device().index();
  factorInPanels(d, lu.view({d.batch, d.m, d.n}), false, [&](const kernels::LuDesc& panel) {
    ACCEL_RT_CHECK(kernels::linalgTable().luFactor(panel, currentRuntimeStream(device)), device);
  });
  return {lu, pivots, info};
}

std::tuple<at::Tensor, at::Tensor> choleskyFactor(const at::Tensor& A, bool upper) {
  // U^T U = A is L L^T for A^T, whose lower triangle is A's upper one.
  kernels::LuDesc d;
  at::Tensor l = columnMajorCopy(upper ? A.mT() : A, d);
  at::Tensor info = at::zeros(batchWith(A, std::nullopt), A.options().dtype(at::kInt));
  d.info = info.mutable_data_ptr<int32_t>();
  const int device = A.device().index();
  factorInPanels(d, l.view({d.batch, d.n, d.n}), true, [&](const kernels::LuDesc& panel) {
    ACCEL_RT_CHECK(kernels::linalgTable().cholesky(panel, currentRuntimeStream(device)), device);
  });
  l.tril_();
  return {upper ? l.mT() : l, info};
}

}  // namespace accel
