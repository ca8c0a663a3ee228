// The fused ops of PyTorch's transformer fast path, which nn.MultiheadAttention (self-attention
// in eval mode, no grad) and nn.TransformerEncoderLayer take on PrivateUse1 as on CUDA:
// _masked_softmax, _transform_bias_rescale_qkv, _native_multi_head_attention and
// _transformer_encoder_layer_fwd. Each is composed of native ops with ATen's formulas
// (ATen/native/transformers/attention.cpp, transformer.cpp): its CPU kernel is device code
// of its own, so it cannot serve accel. nn.TransformerEncoder hands its layers a nested tensor
// when a padding mask comes with the batch: a nested encoder layer runs as the dense one on
// the padded batch with that padding mask (a padded position changes no real token's
// result), so the fast path is native end to end.
#include <ATen/NestedTensorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/_masked_softmax.h>
#include <ATen/ops/_native_multi_head_attention.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/_transform_bias_rescale_qkv.h>
#include <ATen/ops/_transformer_encoder_layer_fwd.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/masked_select.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/stack.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

bool floating(const Tensor& t) { return at::isFloatingType(t.scalar_type()); }

// Softmax over `dim` of `self` with the positions where `mask` is true left out. mask_type 0
// is an [L, L] attention mask and 1 a [B, L] key padding mask, both for a 4-D [B, H, L, L]
// input; any other mask (type 2) has the input's shape. A row with every position masked is
// NaN, as on CPU.
struct MaskedSoftmax {
  static bool native(const Tensor& self, const Tensor&, std::optional<int64_t>,
                     std::optional<int64_t>) {
    return floating(self);
  }
  static Tensor compute(const Tensor& self, const Tensor& mask, std::optional<int64_t> dim,
                        std::optional<int64_t> mask_type, const Output& out) {
    TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be a boolean tensor");
    int64_t type = mask_type.value_or(2);
    if (mask.dim() != 2 || self.dim() != 4) type = 2;
    Tensor m = mask;
    if (type == 1) {
      TORCH_CHECK(self.size(0) == mask.size(0) && self.size(3) == mask.size(1),
                  "For mask_type == 1 mask shape should be (B, L)");
      m = mask.view({self.size(0), 1, 1, self.size(3)});
    } else if (type == 0) {
      TORCH_CHECK(self.size(2) == mask.size(0) && self.size(3) == mask.size(1),
                  "For mask_type == 0 mask shape should be (L, L)");
      m = mask.view({1, 1, self.size(2), self.size(3)});
    } else {
      TORCH_CHECK(self.sizes() == mask.sizes(),
                  "For mask_type == 2 mask shape should match input shape");
    }
    const int64_t d = c10::maybe_wrap_dim(dim.value_or(self.dim() - 1), self.dim());
    const Tensor scores = self.masked_fill(m, -std::numeric_limits<double>::infinity());
    return into(out, at::_softmax(scores, d, false));
  }
};

// qkv [B, T, 3 D] plus its bias, split into q, k, v of [B, heads, T, D / heads]; q is scaled by
// 1 / sqrt(D / heads).
struct TransformBiasRescaleQkv {
  static bool native(const Tensor& qkv, const Tensor& bias, int64_t) {
    return floating(qkv) && !qkv.is_nested() && bias.scalar_type() == qkv.scalar_type();
  }
  static std::tuple<Tensor, Tensor, Tensor> compute(const Tensor& qkv, const Tensor& bias,
                                                    int64_t heads) {
    TORCH_CHECK(qkv.dim() == 3, "expected 3-D `qkv`, got ", qkv.dim(), "-D tensor");
    const int64_t batch = qkv.size(0), tokens = qkv.size(1), dim = qkv.size(2) / 3;
    TORCH_CHECK(qkv.size(2) % 3 == 0 && heads > 0 && dim % heads == 0,
                "qkv's last dimension must be 3 * embed_dim with embed_dim divisible by the ",
                "number of heads");
    const int64_t head_dim = dim / heads;
    // [3, B, heads, T, head_dim]
    const Tensor parts =
        (qkv + bias).view({batch, tokens, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
    const Tensor q = parts.select(0, 0).mul(1.0 / std::sqrt(static_cast<double>(head_dim)));
    return {q.contiguous(), parts.select(0, 1).contiguous(), parts.select(0, 2).contiguous()};
  }
};

// nn.MultiheadAttention's fast path: projections, attention with an optional boolean mask (a
// non-boolean one is taken as boolean, as ATen does), output projection; with need_weights,
// the attention weights (averaged over the heads when asked).
struct NativeMultiHeadAttention {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& query, const Tensor& key, const Tensor& value, int64_t, int64_t,
                     const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                     const std::optional<Tensor>&, bool, bool, std::optional<int64_t>) {
    return floating(query) && !query.is_nested() && !key.is_nested() && !value.is_nested();
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& query, const Tensor& key,
                                            const Tensor& value, int64_t embed_dim, int64_t heads,
                                            const Tensor& qkv_weight, const Tensor& qkv_bias,
                                            const Tensor& proj_weight, const Tensor& proj_bias,
                                            const std::optional<Tensor>& mask, bool need_weights,
                                            bool average_weights, std::optional<int64_t> mask_type,
                                            const Output& out, const Output& weights_out) {
    const int64_t d = embed_dim;
    TORCH_CHECK(query.dim() == 3, "expected 3-D `query`, got ", query.dim(), "-D tensor");
    TORCH_CHECK(query.size(2) == d, "passed-in embed_dim ", d, " didn't match last dim of query ",
                query.size(2));
    TORCH_CHECK(key.dim() == 3, "expected 3-D `key`, got ", key.dim(), "-D tensor");
    TORCH_CHECK(value.dim() == 3, "expected 3-D `value`, got ", value.dim(), "-D tensor");
    TORCH_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(),
                "expected `query`/`key`/`value` shapes to match");
    TORCH_CHECK(qkv_weight.dim() == 2, "expected 2-D `qkv_weight`, got ", qkv_weight.dim(),
                "-D tensor");
    TORCH_CHECK(d * 3 == qkv_weight.size(0), "expected `qkv_weight` first dim to be 3x embed_dim");
    TORCH_CHECK(d == qkv_weight.size(1), "expected `qkv_weight` second dim to be embed_Dim");
    TORCH_CHECK(qkv_bias.dim() == 1, "expected 1-D `qkv_bias`, got ", qkv_bias.dim(), "-D tensor");
    TORCH_CHECK(qkv_bias.size(0) == 3 * d,
                "expected `qkv_bias` first dim and first dim of query to be equal");
    TORCH_CHECK(d % heads == 0, "`embed_dim` must divide evenly by `num_heads`");
    Tensor qkv;
    if (key.is_same(value) && query.is_same(key)) {
      qkv = at::linear(query, qkv_weight);  // self-attention: one product
    } else {
      const auto w = qkv_weight.chunk(3, 0);
      qkv = at::cat({at::linear(query, w[0]), at::linear(key, w[1]), at::linear(value, w[2])}, 2);
    }
    if (qkv.numel() == 0) return {into(out, at::empty_like(query)), Tensor()};
    auto [q, k, v] = at::_transform_bias_rescale_qkv(qkv, qkv_bias, heads);
    const int64_t batch = query.size(0), tokens = query.size(1), head_dim = d / heads;
    Tensor scores = at::bmm(q.view({-1, tokens, head_dim}), k.view({-1, tokens, head_dim}).mT())
                        .view({batch, heads, tokens, tokens});
    if (mask) {
      const Tensor m = mask->scalar_type() == at::kBool ? *mask : mask->to(at::kBool);
      scores = at::_masked_softmax(scores, m, 3, mask_type);
    } else {
      scores = at::_softmax(scores, 3, false);
    }
    const Tensor context =
        at::bmm(scores.view({-1, tokens, tokens}), v.view({-1, tokens, head_dim}))
            .view({batch, heads, tokens, head_dim})
            .transpose(1, 2)
            .reshape({batch, tokens, d});
    const Tensor result = at::linear(context, proj_weight, proj_bias);
    Tensor weights;
    if (need_weights) weights = average_weights ? scores.sum(1) / heads : scores;
    return {into(out, result), weights.defined() ? into(weights_out, weights) : weights};
  }
};

Tensor layerNorm(const Tensor& x, int64_t dim, double eps, const Tensor& w, const Tensor& b) {
  return at::layer_norm(x, {dim}, w, b, eps, true);
}

// nn.TransformerEncoderLayer's fast path: self-attention and the feed-forward block, each
// with its residual, the layer norms before (norm_first) or after.
struct TransformerEncoderLayer {
  static bool native(const Tensor& src, int64_t, int64_t, const Tensor&, const Tensor&,
                     const Tensor&, const Tensor&, bool, bool, double, const Tensor&, const Tensor&,
                     const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                     const Tensor&, const std::optional<Tensor>&, std::optional<int64_t>) {
    return floating(src) && !src.is_nested();
  }
  static Tensor compute(const Tensor& src, int64_t embed_dim, int64_t heads,
                        const Tensor& qkv_weight, const Tensor& qkv_bias, const Tensor& proj_weight,
                        const Tensor& proj_bias, bool use_gelu, bool norm_first, double eps,
                        const Tensor& norm_weight_1, const Tensor& norm_bias_1,
                        const Tensor& norm_weight_2, const Tensor& norm_bias_2,
                        const Tensor& ffn_weight_1, const Tensor& ffn_bias_1,
                        const Tensor& ffn_weight_2, const Tensor& ffn_bias_2,
                        const std::optional<Tensor>& mask, std::optional<int64_t> mask_type,
                        const Output& out) {
    if (src.numel() == 0) return into(out, src.clone());
    Tensor x = norm_first ? layerNorm(src, embed_dim, eps, norm_weight_1, norm_bias_1) : src;
    x = std::get<0>(at::_native_multi_head_attention(x, x, x, embed_dim, heads, qkv_weight,
                                                     qkv_bias, proj_weight, proj_bias, mask, false,
                                                     true, mask_type));
    x.add_(src);
    if (!norm_first) x = layerNorm(x, embed_dim, eps, norm_weight_1, norm_bias_1);
    const Tensor residual = x;
    if (norm_first) x = layerNorm(x, embed_dim, eps, norm_weight_2, norm_bias_2);
    x = at::linear(x, ffn_weight_1, ffn_bias_1);
    x = use_gelu ? at::gelu(x) : at::relu(x);
    x = at::linear(x, ffn_weight_2, ffn_bias_2);
    x.add_(residual);
    if (!norm_first) x = layerNorm(x, embed_dim, eps, norm_weight_2, norm_bias_2);
    return into(out, x);
  }
};

// [B, T] true where a token is padding, from a nested [B][T_b, D] tensor's sizes.
Tensor paddingMask(const Tensor& nested, int64_t tokens) {
  const Tensor lengths = at::native::get_nested_sizes(nested).select(1, 0).to(nested.device());
  return at::arange(tokens, lengths.options()).unsqueeze(0) >= lengths.unsqueeze(1);
}

// The nested tensor of `padded`'s [B, T, D] rows, as many from each row as `keep` [B, T] has
// true entries; with `check`, keep's must lead each row.
Tensor nestedFromMask(const Tensor& padded, const Tensor& keep, bool check) {
  TORCH_CHECK(keep.scalar_type() == at::kBool, "Expected mask to be of ScalarType Bool, but got ",
              keep.scalar_type(), " instead.");
  TORCH_CHECK(padded.dim() == 3, "Input should be a 3D tensor, N * L * D");
  TORCH_CHECK(keep.dim() == 2 && keep.size(0) == padded.size(0) && keep.size(1) == padded.size(1),
              "Mask size should match input size");
  // The sizes of a nested tensor live on the host: this reads the lengths (a sync, as on CUDA).
  const Tensor lengths = keep.sum(1).cpu();
  const Tensor leading = at::arange(padded.size(1), keep.options().dtype(at::kLong)).unsqueeze(0) <
                         lengths.to(keep.device()).unsqueeze(1);
  if (check) TORCH_CHECK(keep.equal(leading), "Mask must be left-aligned without gaps");
  // Each row's first length tokens, as CPU takes them whatever the mask's layout.
  const Tensor rows = at::masked_select(padded, leading.unsqueeze(2)).view({-1});
  const Tensor sizes =
      at::stack({lengths, at::full_like(lengths, padded.size(2))}, 1).to(at::kLong);
  return at::detail::make_tensor<at::native::NestedTensorImpl>(rows, sizes);
}

struct NestedTensorFromMask {
  static bool native(const Tensor& t, const Tensor&, bool) { return !t.is_nested(); }
  static Tensor compute(const Tensor& t, const Tensor& mask, bool mask_check) {
    return nestedFromMask(t, mask, mask_check);
  }
};

// Whether `mask` [B, T] is true on a leading run of each row and false after it.
struct NestedTensorFromMaskLeftAligned {
  static bool native(const Tensor&, const Tensor&) { return true; }
  static bool compute(const Tensor& t, const Tensor& mask) {
    TORCH_CHECK(mask.scalar_type() == at::kBool, "Expected mask to be of ScalarType Bool, but got ",
                mask.scalar_type(), " instead.");
    TORCH_CHECK(
        mask.dim() == 2 && t.dim() >= 2 && mask.size(0) == t.size(0) && mask.size(1) == t.size(1),
        "Mask size should match input size");
    const Tensor lengths = mask.sum(1, false, at::kLong);
    return mask.equal(at::arange(mask.size(1), lengths.options()).unsqueeze(0) <
                      lengths.unsqueeze(1));
  }
};

Tensor nestedEncoderLayer(const Tensor& src, int64_t embed_dim, int64_t heads,
                          const Tensor& qkv_weight, const Tensor& qkv_bias,
                          const Tensor& proj_weight, const Tensor& proj_bias, bool use_gelu,
                          bool norm_first, double eps, const Tensor& norm_weight_1,
                          const Tensor& norm_bias_1, const Tensor& norm_weight_2,
                          const Tensor& norm_bias_2, const Tensor& ffn_weight_1,
                          const Tensor& ffn_bias_1, const Tensor& ffn_weight_2,
                          const Tensor& ffn_bias_2, const std::optional<Tensor>& mask,
                          std::optional<int64_t> mask_type) {
  TORCH_CHECK(!mask, "NestedTensor with mask is not supported yet");
  const Tensor padded = src.to_padded_tensor(0);
  const Tensor padding = paddingMask(src, padded.size(1));
  const Tensor out = at::_transformer_encoder_layer_fwd(
      padded, embed_dim, heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first,
      eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1,
      ffn_weight_2, ffn_bias_2, padding, 1);
  return nestedFromMask(out, padding.logical_not(), false);
}

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("_transformer_encoder_layer_fwd", nestedEncoderLayer);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<NestedTensorFromMask>(m, "_nested_tensor_from_mask");
  registerNative<NestedTensorFromMaskLeftAligned>(m, "_nested_tensor_from_mask_left_aligned");
  registerForms<MaskedSoftmax>(m, "_masked_softmax", nullptr, "_masked_softmax.out");
  registerNative<TransformBiasRescaleQkv>(m, "_transform_bias_rescale_qkv");
  registerForms<NativeMultiHeadAttention>(m, "_native_multi_head_attention", nullptr, nullptr);
  registerForms<TransformerEncoderLayer>(m, "_transformer_encoder_layer_fwd", nullptr,
                                         "_transformer_encoder_layer_fwd.out");
}

}  // namespace
}  // namespace accel
