// linalg_solve_triangular (functional and out=): CPU's checks and dtype promotion, the batch
// dimensions broadcast, then the triangular solve kernel (kernels/linalg.h) in place on a copy of
// B. left=False (X A = B) is solved as A^T X^T = B^T: transposed strides and the other triangle, no
// copy. float and double; the rest goes through the counted fallback (CPU computes complex, and
// refuses half and the integers).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <vector>

#include "aten/elementwise_desc.h"
#include "aten/linalg_factor.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/linalg.h"

namespace accel {
namespace {

using at::Tensor;

bool overlaps(const Tensor& a, const Tensor& b) {
  return at::get_overlap_status(a, b) != at::MemOverlapStatus::No;
}

struct SolveTriangular {
  static bool native(const Tensor& A, const Tensor& B, bool, bool, bool) {
    return factorable(A.scalar_type()) && factorable(B.scalar_type()) && B.is_privateuseone() &&
           A.device() == B.device();
  }
  static Tensor compute(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit,
                        const Output& out) {
    const char* f = "linalg.solve_triangular";
    TORCH_CHECK(A.dim() >= 2, f, ": The input tensor A must have at least 2 dimensions.");
    TORCH_CHECK(A.size(-1) == A.size(-2), f,
                ": A must be batches of square matrices, but they are ", A.size(-2), " by ",
                A.size(-1), " matrices");
    TORCH_CHECK(B.dim() >= 2, f, ": The input tensor B must have at least 2 dimensions.");
    TORCH_CHECK(left ? A.size(-2) == B.size(-2) : A.size(-1) == B.size(-1), f,
                ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
                " (", A.size(-2), "x", A.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
    const auto dtype = c10::promoteTypes(A.scalar_type(), B.scalar_type());
    const int64_t n = A.size(-1), rows = B.size(-2), cols = B.size(-1);
    std::vector<int64_t> shape =
        at::infer_size(B.sizes().slice(0, B.dim() - 2), A.sizes().slice(0, A.dim() - 2));
    std::vector<int64_t> a_shape = shape;
    a_shape.insert(a_shape.end(), {n, n});
    shape.insert(shape.end(), {rows, cols});
    const auto options = B.options().dtype(dtype);

    Tensor x = out.allocate(shape, options, Output::DTypeRule::Exact, /*contiguous=*/true);
    // X is written in place: an out= over A, or over part of B, takes a temporary.
    if (overlaps(x, A) || (overlaps(x, B) && !x.is_same(B))) x = at::empty(shape, options);
    if (!x.is_same(B)) x.copy_(B.expand(shape));
    if (x.numel() == 0) return out.finish(x);

    const Tensor a = A.to(dtype).resolve_neg().expand(a_shape).reshape({-1, n, n});
    kernels::TriangularSolveDesc d;
    d.dtype = toKernelDType(dtype);
    d.batch = a.size(0);
    d.n = n;
    d.cols = left ? cols : rows;
    d.a = static_cast<const char*>(a.const_data_ptr());
    d.a_batch = a.stride(0);
    d.a_row = a.stride(left ? 1 : 2);
    d.a_col = a.stride(left ? 2 : 1);
    d.x = static_cast<char*>(x.mutable_data_ptr());
    d.x_batch = rows * cols;
    d.x_row = left ? cols : 1;
    d.x_col = left ? 1 : cols;
    d.upper = left ? upper : !upper;
    d.unit = unit;
    const int device = x.device().index();
    ACCEL_RT_CHECK(kernels::linalgTable().solveTriangular(d, currentRuntimeStream(device)), device);
    return out.finish(x);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<SolveTriangular>(m, "linalg_solve_triangular", nullptr,
                                 "linalg_solve_triangular.out");
}

}  // namespace
}  // namespace accel
