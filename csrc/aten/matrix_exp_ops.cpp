// linalg_matrix_exp: scaling and squaring around a degree-18 Taylor polynomial, composed of
// native ops (GEMMs and elementwise), computed in double (complex128) whatever the input's
// precision and rounded once: CPU's float32 result follows its own float32 products, and a
// float32 polynomial was up to 4x farther than CPU's from the exact value. Each matrix is scaled
// by 2^-s to a 1-norm of at most 1, where the polynomial's truncation error (1/19! < 1e-17) is
// under double's rounding, and its result is squared s times. s differs per matrix of a batch:
// each squares while its own count lasts. The largest s is read on the host, one sync per
// call, as ATen's CUDA kernel reads its norms. Integer inputs go to the counted fallback, whose
// CPU kernel raises CPU's error.
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/ceil.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/exp2.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/log2.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/nan_to_num.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <array>

#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

constexpr int kDegree = 18;
// Paterson-Stockmeyer: the powers A^1..A^4, then Horner in A^4 over blocks of four terms. Seven
// products in all, against 17 for plain Horner.
constexpr int kBlock = 4;

constexpr std::array<double, kDegree + 1> inverseFactorials() {
  std::array<double, kDegree + 1> c{};
  c[0] = 1.0;
  for (int k = 1; k <= kDegree; ++k) c[k] = c[k - 1] / k;
  return c;
}
constexpr auto kTaylor = inverseFactorials();

// The 1/k! terms k = first .. first + 3 (up to the degree), of the powers p[0..3].
Tensor block(const std::array<Tensor, kBlock + 1>& p, int first) {
  Tensor b = at::mul(p[0], kTaylor[first]);
  for (int j = 1; j < kBlock && first + j <= kDegree; ++j) b = at::add(b, p[j], kTaylor[first + j]);
  return b;
}

Tensor scaledTaylor(const Tensor& a) {
  const int64_t n = a.size(-1);
  // s = ceil(log2(||A||_1)), at least 0; a norm that is not finite (the result is NaN then)
  // does not square.
  const Tensor norm = at::amax(at::sum(at::abs(a), -2), -1);
  const Tensor s = at::clamp_min(at::nan_to_num(at::ceil(at::log2(norm)), 0, 0, 0), 0);
  const int64_t squarings = static_cast<int64_t>(s.max().item<double>());
  const Tensor x = at::mul(a, at::exp2(-s).unsqueeze(-1).unsqueeze(-1));

  std::array<Tensor, kBlock + 1> p;
  p[0] = at::eye(n, a.options()).expand_as(x);
  p[1] = x;
  p[2] = at::matmul(x, x);
  p[3] = at::matmul(p[2], x);
  p[4] = at::matmul(p[2], p[2]);
  int first = kDegree / kBlock * kBlock;
  Tensor r = block(p, first);
  for (first -= kBlock; first >= 0; first -= kBlock)
    r = at::add(at::matmul(r, p[4]), block(p, first));

  const Tensor counts = s.unsqueeze(-1).unsqueeze(-1);
  for (int64_t i = 0; i < squarings; ++i) r = at::where(at::gt(counts, i), at::matmul(r, r), r);
  return r;
}

struct MatrixExp {
  static bool native(const Tensor& a) {
    const auto t = a.scalar_type();
    return at::isFloatingType(t) || t == at::kComplexFloat || t == at::kComplexDouble;
  }
  static Tensor compute(const Tensor& a) {
    at::native::squareCheckInputs(a, "linalg.matrix_exp");  // CPU's own check and messages
    if (a.numel() == 0) return at::empty_like(a, at::MemoryFormat::Contiguous);
    if (a.size(-1) == 1) return at::exp(a);
    const auto type = a.scalar_type();
    const auto wide = at::isComplexType(type) ? at::kComplexDouble : at::kDouble;
    return scaledTaylor(a.to(wide)).to(type);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { registerNative<MatrixExp>(m, "linalg_matrix_exp"); }

}  // namespace
}  // namespace accel
