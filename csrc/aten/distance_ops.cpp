// Pairwise distances: torch.cdist (_cdist_forward, _cdist_backward) and F.pdist
// (_pdist_forward, _pdist_backward), composed of native ops with CPU's formulas
// (ATen/native/Distance.cpp and its kernels): the p-norms of the row differences, or, for p = 2
// on larger inputs, CPU's matrix-product form |a|^2 - 2 a.b + |b|^2. float and double, as CPU.
#include <ATen/ExpandUtils.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/triu_indices.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <vector>

#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

bool floatOrDouble(const Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble;
}

// d/dx1 of ||x1 - x2||_p, times grad: `diff` is x1 - x2 [..., M], `grad` and `dist` [..., 1].
// A zero distance (and, for p < 1, a zero difference) has a zero gradient, as on CPU.
Tensor normGradient(const Tensor& diff, const Tensor& grad, const Tensor& dist, double p) {
  const Tensor zero = at::zeros({}, diff.options());
  if (p == 1.0) return grad * diff.sign();
  if (std::isinf(p)) return grad * diff.sign() * (diff.abs() == dist);
  if (p == 2.0) return at::where(dist == 0, zero, grad * diff / dist);
  Tensor term = p < 2.0 ? diff.sign() * diff.abs().pow(p - 1) : diff * diff.abs().pow(p - 2);
  term = grad * term / dist.pow(p - 1);
  Tensor none = (dist == 0).expand_as(term);
  if (p < 1.0) none = none | (diff == 0);
  return at::where(none, zero, term);
}

struct CdistForward {
  static bool native(const Tensor& x1, const Tensor& x2, double, std::optional<int64_t>) {
    return floatOrDouble(x1) && floatOrDouble(x2);
  }
  static Tensor compute(const Tensor& x1, const Tensor& x2, double p,
                        std::optional<int64_t> compute_mode) {
    TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
    TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
    TORCH_CHECK(x1.size(-1) == x2.size(-1),
                "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
                " X2: ", x2.size(-1));
    TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
    const int64_t mode = compute_mode.value_or(0);
    TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
    TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "expected scalar type ", x1.scalar_type(),
                " but found ", x2.scalar_type());
    const int64_t rows1 = x1.size(-2), rows2 = x2.size(-2), cols = x1.size(-1);
    std::vector<int64_t> batch =
        at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
    std::vector<int64_t> shape1 = batch, shape2 = batch, out = batch;
    shape1.insert(shape1.end(), {rows1, cols});
    shape2.insert(shape2.end(), {rows2, cols});
    out.insert(out.end(), {rows1, rows2});
    const Tensor a = x1.expand(shape1), b = x2.expand(shape2);
    if (rows1 == 0 || rows2 == 0) return at::empty(out, x1.options());
    if (cols == 0) return at::zeros(out, x1.options());
    if (p == 2.0 && (mode == 1 || (mode == 0 && (rows1 > 25 || rows2 > 25)))) {
      const Tensor norm1 = a.pow(2).sum(-1, true), norm2 = b.pow(2).sum(-1, true);
      const Tensor left = at::cat({a.mul(-2), norm1, at::ones_like(norm1)}, -1);
      const Tensor right = at::cat({b, at::ones_like(norm2), norm2}, -1);
      return left.matmul(right.mT()).clamp_min_(1e-30).sqrt_();
    }
    return at::linalg_vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, {-1});
  }
};

struct CdistBackward {
  static bool native(const Tensor& grad, const Tensor& x1, const Tensor& x2, double,
                     const Tensor&) {
    return floatOrDouble(grad) && floatOrDouble(x1) && floatOrDouble(x2);
  }
  static Tensor compute(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                        const Tensor& cdist) {
    if (p == 0.0 || grad.numel() == 0 || x1.numel() == 0 || x2.numel() == 0)
      return at::zeros_like(x1, at::MemoryFormat::Contiguous);
    const Tensor diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);  // [..., P, R, M]
    const Tensor rows = normGradient(diff, grad.unsqueeze(-1), cdist.unsqueeze(-1), p).sum(-2);
    return rows.sum_to_size(x1.sizes()).contiguous();
  }
};

// The pairs (i, j), i < j, of rows, in pdist's order.
Tensor pairs(const Tensor& self) {
  const int64_t n = self.size(0);
  return at::triu_indices(n, n, 1, self.options().dtype(at::kLong));
}

struct PdistForward {
  static bool native(const Tensor& self, double) { return floatOrDouble(self); }
  static Tensor compute(const Tensor& self, double p) {
    TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
    const Tensor ij = pairs(self);
    if (ij.size(1) == 0) return at::empty({0}, self.options());
    if (self.size(1) == 0) return at::zeros({ij.size(1)}, self.options());
    const Tensor diff = self.index_select(0, ij[0]) - self.index_select(0, ij[1]);
    return at::linalg_vector_norm(diff, p, {-1});
  }
};

struct PdistBackward {
  static bool native(const Tensor& grad, const Tensor& self, double, const Tensor&) {
    return floatOrDouble(grad) && floatOrDouble(self);
  }
  static Tensor compute(const Tensor& grad, const Tensor& self, double p, const Tensor& pdist) {
    Tensor result = at::zeros_like(self, at::MemoryFormat::Contiguous);
    if (p == 0.0 || grad.numel() == 0 || self.size(0) <= 1) return result;
    const Tensor ij = pairs(self);
    const Tensor diff = self.index_select(0, ij[0]) - self.index_select(0, ij[1]);
    const Tensor term = normGradient(diff, grad.unsqueeze(-1), pdist.unsqueeze(-1), p);
    return result.index_add_(0, ij[0], term).index_add_(0, ij[1], term.neg());
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<CdistForward>(m, "_cdist_forward");
  registerNative<CdistBackward>(m, "_cdist_backward");
  registerNative<PdistForward>(m, "_pdist_forward");
  registerNative<PdistBackward>(m, "_pdist_backward");
}

}  // namespace
}  // namespace accel
