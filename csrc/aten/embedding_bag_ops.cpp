// embedding_bag in modes sum, mean and max, composed of native ops: each index's bag from a
// search of the offsets, the rows gathered, weighted and added into their bags (in float for
// half and bfloat16), and the dense backward the same way back. Mode max is a scatter-max of
// the rows into their bags, with the first index reaching each maximum (a scatter-min of the
// positions that do, as CPU's strict comparison keeps the first); its backward scatter-adds
// each non-empty bag's gradient at those indices. Nothing reads device data: offsets[0] != 0
// is not checked (as on CUDA); indices before it reach no bag and raise from index_add_.
#include <ATen/OpMathType.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/TensorOperators.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

bool indexType(const Tensor& t) {
  return t.scalar_type() == at::kLong || t.scalar_type() == at::kInt;
}

// Per index: whether it counts (not the padding index), as a mask, or undefined when all do.
Tensor kept(const Tensor& indices, int64_t padding_idx) {
  return padding_idx >= 0 ? indices != padding_idx : Tensor();
}

using Outputs = std::tuple<Tensor, Tensor, Tensor, Tensor>;

// Mode max: each bag's elementwise max of its rows (0 for an empty bag) and the index of the
// first row reaching it (0 for an empty bag, as CPU's). Padding rows go to an extra bag.
std::pair<Tensor, Tensor> bagMax(const Tensor& weight, const Tensor& idx, const Tensor& bag,
                                 const Tensor& keep, int64_t bags) {
  const int64_t n = idx.numel(), dim = weight.size(1);
  const Tensor target =
      (keep.defined() ? at::where(keep, bag, bags) : bag).unsqueeze(1).expand({n, dim});
  const Tensor rows = weight.index_select(0, idx);
  const Tensor out = at::zeros({bags + 1, dim}, weight.options())
                         .scatter_reduce_(0, target, rows, "amax", /*include_self=*/false);
  const Tensor position = at::arange(n, idx.options()).unsqueeze(1).expand({n, dim});
  const Tensor reaching = at::where(rows == out.gather(0, target), position, n);
  const Tensor first = at::full({bags + 1, dim}, n, idx.options())
                           .scatter_reduce_(0, target, reaching, "amin", /*include_self=*/true);
  const Tensor index_or_0 = at::cat({idx, at::zeros({1}, idx.options())});
  const Tensor max_indices = index_or_0.index_select(0, first.reshape({-1})).view({bags + 1, dim});
  return {out.narrow(0, 0, bags), max_indices.narrow(0, 0, bags)};
}

struct EmbeddingBag {
  static bool native(const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool,
                     int64_t mode, bool, const std::optional<Tensor>& psw, bool, int64_t) {
    return floatingKernelType(weight) && indexType(indices) && indexType(offsets) &&
           (mode == kSum || mode == kMean || mode == kMax) && floatingOrAbsent(psw);
  }
  // Returns (output [B, D], offset2bag [n], bag_size [B], max_indices: [B, D] for mode max,
  // bag_size for the others).
  static Outputs compute(const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool,
                         int64_t mode, bool, const std::optional<Tensor>& psw,
                         bool include_last_offset, int64_t padding_idx) {
    TORCH_CHECK(indices.dim() == 1, "input has to be a 1D Tensor, but got Tensor of dimension ",
                indices.dim());
    TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ",
                offsets.dim());
    TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ",
                weight.dim());
    const bool weighted = given(psw);
    TORCH_CHECK(!weighted || mode == kSum,
                "embedding_bag: per_sample_weights only supported with mode='sum'");
    TORCH_CHECK(!weighted || psw->sizes() == indices.sizes(),
                "embedding_bag: expected per_sample_weights to be 1D tensor of the same size as "
                "input, got ",
                psw->sizes(), " and ", indices.sizes());
    const int64_t bags = include_last_offset ? offsets.size(0) - 1 : offsets.size(0);
    TORCH_CHECK(bags >= 0, "include_last_offset: number of offsets should be at least 1");
    const int64_t n = indices.size(0), dim = weight.size(1);
    const Tensor idx = indices.to(at::kLong);
    const at::TensorOptions acc = weight.options().dtype(at::toOpMathType(weight.scalar_type()));
    const at::TensorOptions longs = idx.options();
    // Bag of index i: the last bag whose start is <= i.
    const Tensor bag =
        at::searchsorted(offsets.to(at::kLong).slice(0, 0, bags), at::arange(n, longs), false,
                         /*right=*/true) -
        1;
    const Tensor keep = kept(idx, padding_idx);
    const Tensor counted = keep.defined() ? keep.to(at::kLong) : at::ones({n}, longs);
    const Tensor bag_size = at::zeros({bags}, longs).index_add_(0, bag, counted);
    if (mode == kMax) {
      auto [out, max_indices] = bagMax(weight, idx, bag, keep, bags);
      return {out, bag, bag_size, max_indices.to(indices.scalar_type())};
    }
    Tensor rows = weight.index_select(0, idx).to(acc.dtype());
    if (weighted) rows = rows * psw->to(acc.dtype()).unsqueeze(1);
    if (keep.defined()) rows = at::where(keep.unsqueeze(1), rows, 0);
    Tensor out = at::zeros({bags, dim}, acc).index_add_(0, bag, rows);
    if (mode == kMean) out = out / bag_size.clamp_min(1).unsqueeze(1).to(acc.dtype());
    return {out.to(weight.scalar_type()), bag, bag_size, bag_size.clone()};
  }
};

struct EmbeddingBagDenseBackward {
  static bool native(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                     const Tensor&, const Tensor&, int64_t, bool, int64_t mode,
                     const std::optional<Tensor>&, int64_t) {
    // offset2bag full: the forward was ours (CPU's sum fast path leaves it empty).
    return floatingKernelType(grad) && indexType(indices) &&
           (mode == kSum || mode == kMean || mode == kMax) && offset2bag.numel() == indices.numel();
  }
  static Tensor compute(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                        const Tensor& bag_size, const Tensor& max_indices, int64_t num_weights,
                        bool scale_grad_by_freq, int64_t mode, const std::optional<Tensor>& psw,
                        int64_t padding_idx) {
    if (mode == kMax) {
      // In grad's dtype, in bag order, as CPU adds them; empty bags add nothing.
      const Tensor g = at::where((bag_size > 0).unsqueeze(1), grad, 0);
      return at::zeros({num_weights, grad.size(1)}, grad.options())
          .scatter_add_(0, max_indices.to(at::kLong), g);
    }
    const Tensor idx = indices.to(at::kLong);
    const at::ScalarType acc = at::toOpMathType(grad.scalar_type());
    Tensor g = grad.to(acc).index_select(0, offset2bag);  // each index's bag gradient
    if (mode == kMean)
      g = g / bag_size.index_select(0, offset2bag).clamp_min(1).unsqueeze(1).to(acc);
    if (given(psw)) g = g * psw->to(acc).unsqueeze(1);
    const Tensor keep = kept(idx, padding_idx);
    if (keep.defined()) g = at::where(keep.unsqueeze(1), g, 0);
    if (scale_grad_by_freq) {
      // Each row's gradient divided by how often its index occurs in the batch.
      const Tensor once = keep.defined() ? keep.to(acc) : at::ones({idx.numel()}, g.options());
      const Tensor freq = at::zeros({num_weights}, g.options()).index_add_(0, idx, once);
      g = g / freq.index_select(0, idx).clamp_min(1).unsqueeze(1);
    }
    return at::zeros({num_weights, grad.size(1)}, g.options())
        .index_add_(0, idx, g)
        .to(grad.scalar_type());
  }
};

// The weight's gradient as autograd asks for it; sparse=True stays on the fallback.
struct EmbeddingBagBackward {
  static bool native(const Tensor& grad, const Tensor& indices, const Tensor&,
                     const Tensor& offset2bag, const Tensor& bag_size, const Tensor& max_indices,
                     int64_t num_weights, bool scale_grad_by_freq, int64_t mode, bool sparse,
                     const std::optional<Tensor>& psw, int64_t padding_idx) {
    return !sparse && EmbeddingBagDenseBackward::native(grad, indices, offset2bag, bag_size,
                                                        max_indices, num_weights,
                                                        scale_grad_by_freq, mode, psw, padding_idx);
  }
  static Tensor compute(const Tensor& grad, const Tensor& indices, const Tensor&,
                        const Tensor& offset2bag, const Tensor& bag_size, const Tensor& max_indices,
                        int64_t num_weights, bool scale_grad_by_freq, int64_t mode, bool,
                        const std::optional<Tensor>& psw, int64_t padding_idx) {
    return EmbeddingBagDenseBackward::compute(grad, indices, offset2bag, bag_size, max_indices,
                                              num_weights, scale_grad_by_freq, mode, psw,
                                              padding_idx);
  }
};

// d(output[bag(i)]) / d(psw[i]) in mode sum: the bag's gradient dotted with the index's row.
struct EmbeddingBagPerSampleWeightsBackward {
  static bool native(const Tensor& grad, const Tensor& weight, const Tensor& indices, const Tensor&,
                     const Tensor& offset2bag, int64_t mode, int64_t) {
    return floatingKernelType(grad) && floatingKernelType(weight) && indexType(indices) &&
           mode == kSum && offset2bag.numel() == indices.numel();
  }
  static Tensor compute(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                        const Tensor&, const Tensor& offset2bag, int64_t mode,
                        int64_t padding_idx) {
    TORCH_CHECK(mode == kSum,
                "embedding_bag_backward: per_sample_weights only supported for "
                "mode='sum'");
    const Tensor idx = indices.to(at::kLong);
    const at::ScalarType acc = at::toOpMathType(grad.scalar_type());
    Tensor dot =
        (grad.to(acc).index_select(0, offset2bag) * weight.index_select(0, idx).to(acc)).sum(1);
    const Tensor keep = kept(idx, padding_idx);
    if (keep.defined()) dot = at::where(keep, dot, 0);
    return dot.to(grad.scalar_type());
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<EmbeddingBag>(m, "_embedding_bag");
  registerNative<EmbeddingBag>(m, "_embedding_bag_forward_only");
  registerNative<EmbeddingBagBackward>(m, "_embedding_bag_backward");
  registerNative<EmbeddingBagDenseBackward>(m, "_embedding_bag_dense_backward");
  registerNative<EmbeddingBagPerSampleWeightsBackward>(
      m, "_embedding_bag_per_sample_weights_backward");
}

}  // namespace
}  // namespace accel
