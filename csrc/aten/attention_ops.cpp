// scaled_dot_product_attention's fused backend on accel. torch asks each device which backend
// a call takes (_fused_sdp_choice_stub); accel answers "overrideable" for calls its fused
// forward (kernels/norm.h, AttentionDesc) covers, and the math path for the rest. The fused
// forward is one launch per call where the math path takes about eight (scaling, two batched
// products, the mask, _safe_softmax, and repeat_interleave for grouped-query heads), which is
// most of a decoding step's attention time. It is chosen for inference only (no input needs
// a gradient: the math path's backward stays) and for short query blocks, where one pass per
// query row beats the math path's batched GEMMs (decoding, short prompts).
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/core/grad_mode.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "aten/elementwise_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/norm.h"

namespace accel {
namespace {

using at::Tensor;

// The fused forward computes each score as its own dot product, where the math path's batched
// GEMMs share the loads: it runs while there are few query rows (decoding: one) or few scores
// per head (a short prompt). On the host, with 8 query and 2 key/value heads of 32, one query
// row over 64 keys took 10 us against the math path's 39 (CPU's flash kernel 14), 8 rows over
// 128 keys 68 against 66, 32 over 32 55 against 75, and 64 over 64 148 against 153
// (benchmarks/attention.py).
constexpr int64_t kFusedMaxQueries = 8;
constexpr int64_t kFusedMaxScores = 1024;  // per (batch, head), query rows times keys

bool fewScores(int64_t queries, int64_t keys) {
  return queries <= kFusedMaxQueries || queries * keys <= kFusedMaxScores;
}

bool fusedDtype(const Tensor& t) {
  return at::isFloatingType(t.scalar_type()) && kernelSupports(t.scalar_type());
}

bool needsGrad(const Tensor& q, const Tensor& k, const Tensor& v,
               const std::optional<Tensor>& mask) {
  return at::GradMode::is_enabled() &&
         (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
          (mask && mask->defined() && mask->requires_grad()));
}

bool fusedFits(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask,
               double dropout_p, bool is_causal, bool enable_gqa) {
  if (dropout_p != 0.0 || needsGrad(q, k, v, mask)) return false;
  // Traced by torch.compile (fake or functional tensors): the math path, which Inductor fuses. Its
  // C++ wrapper cannot call this op (torch 2.13 emits the op's integer outputs as invalid code).
  const c10::DispatchKeySet traced({c10::DispatchKey::Python, c10::DispatchKey::Functionalize});
  if (q.key_set().has_any(traced)) return false;
  if (is_causal && mask && mask->defined()) return false;  // the math path raises
  if (q.is_nested() || k.is_nested() || v.is_nested()) return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  if (!fusedDtype(q) || k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type())
    return false;
  const int64_t batch = q.size(0), heads = q.size(1), kv_heads = k.size(1);
  if (k.size(0) != batch || v.size(0) != batch || v.size(1) != kv_heads) return false;
  if (kv_heads == 0 || heads % kv_heads != 0 || (heads != kv_heads && !enable_gqa)) return false;
  if (k.size(2) != v.size(2) || k.size(3) != q.size(3)) return false;
  if (!fewScores(q.size(2), k.size(2))) return false;
  if (mask && mask->defined()) {
    if (mask->scalar_type() != at::kBool && mask->scalar_type() != q.scalar_type()) return false;
    if (!at::is_expandable_to(mask->sizes(), {batch, heads, q.size(2), k.size(2)})) return false;
  }
  return true;
}

// The backend torch's scaled_dot_product_attention runs for accel inputs. The fused forward
// stands in for the fused backends a torch.cuda user may restrict a call to (sdpa_kernel with
// FLASH_ATTENTION, say); whatever it does not cover takes the math path, as before it existed.
int64_t fusedSdpChoice(const Tensor& q, const Tensor& k, const Tensor& v,
                       const std::optional<Tensor>& mask, double dropout_p, bool is_causal,
                       std::optional<double> /*scale*/, bool enable_gqa) {
  const auto& ctx = at::globalContext();
  const bool fused_allowed = ctx.userEnabledOverrideableSDP() || ctx.userEnabledFlashSDP() ||
                             ctx.userEnabledMemEfficientSDP() || ctx.userEnabledCuDNNSDP();
  if (fused_allowed && fusedFits(q, k, v, mask, dropout_p, is_causal, enable_gqa))
    return static_cast<int64_t>(at::SDPBackend::overrideable);
  return static_cast<int64_t>(at::SDPBackend::math);
}

// An empty tensor of `sizes` whose dims lie in memory in the order of `like`'s strides (the
// output of a query transposed from [batch, rows, heads, dim] keeps that layout, so the
// transpose back is free), as alloc_with_matching_layout.
Tensor emptyInLayoutOf(const Tensor& like, at::IntArrayRef sizes) {
  std::vector<int64_t> order(like.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  std::vector<int64_t> permuted(order.size()), inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    permuted[i] = sizes[order[i]];
    inverse[order[i]] = static_cast<int64_t>(i);
  }
  return at::empty(permuted, like.options()).permute(inverse);
}

Tensor denseLastDim(const Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

using FusedResult =
    std::tuple<Tensor, Tensor, Tensor, Tensor, c10::SymInt, c10::SymInt, Tensor, Tensor, Tensor>;

FusedResult fusedAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                           const std::optional<Tensor>& attn_bias, double dropout_p, bool is_causal,
                           bool return_debug_mask, std::optional<double> scale) {
  TORCH_CHECK_NOT_IMPLEMENTED(dropout_p == 0.0,
                              "accel's fused attention has no dropout: "
                              "scaled_dot_product_attention takes the math path for it");
  TORCH_CHECK_NOT_IMPLEMENTED(!return_debug_mask,
                              "accel's fused attention returns no debug attention mask");
  TORCH_CHECK(query.dim() == key.dim() && query.dim() == value.dim() &&
                  (query.dim() == 3 || query.dim() == 4),
              "accel's fused attention takes 3-D or 4-D query, key and value, got ", query.dim(),
              "-D, ", key.dim(), "-D and ", value.dim(), "-D");
  TORCH_CHECK(fusedDtype(query) && key.scalar_type() == query.scalar_type() &&
                  value.scalar_type() == query.scalar_type(),
              "accel's fused attention takes query, key and value of one floating dtype, got ",
              query.scalar_type(), ", ", key.scalar_type(), " and ", value.scalar_type());
  const bool batched = query.dim() == 4;
  const Tensor q = denseLastDim(batched ? query : query.unsqueeze(0));
  const Tensor k = denseLastDim(batched ? key : key.unsqueeze(0));
  const Tensor v = denseLastDim(batched ? value : value.unsqueeze(0));
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2);
  const int64_t kv_heads = k.size(1), keys = k.size(2);
  TORCH_CHECK(k.size(0) == batch && v.size(0) == batch && v.size(1) == kv_heads &&
                  v.size(2) == keys && k.size(3) == q.size(3),
              "accel's fused attention: key ", key.sizes(), " and value ", value.sizes(),
              " do not match query ", query.sizes());
  TORCH_CHECK(kv_heads > 0 && heads % kv_heads == 0, "accel's fused attention: query heads (",
              heads, ") must be a multiple of key/value heads (", kv_heads, ")");

  kernels::AttentionDesc d;
  Tensor mask;
  if (attn_bias && attn_bias->defined()) {
    mask = attn_bias->scalar_type() == at::kBool
               ? at::where(*attn_bias, 0.0, -std::numeric_limits<double>::infinity())
                     .to(q.scalar_type())
               : attn_bias->to(q.scalar_type());
    TORCH_CHECK(at::is_expandable_to(mask.sizes(), {batch, heads, queries, keys}),
                "accel's fused attention: ", "attn_bias ", attn_bias->sizes(),
                " does not broadcast to [", batch, ", ", heads, ", ", queries, ", ", keys, "]");
    mask = mask.expand({batch, heads, queries, keys});
    d.mask = static_cast<const char*>(mask.const_data_ptr());
    for (int i = 0; i < 4; ++i) d.mask_stride[i] = mask.stride(i);
  }
  Tensor out = emptyInLayoutOf(q, {batch, heads, queries, v.size(3)});
  Tensor lse = at::empty({batch, heads, queries}, q.options().dtype(at::kFloat));
  d.q = static_cast<const char*>(q.const_data_ptr());
  d.k = static_cast<const char*>(k.const_data_ptr());
  d.v = static_cast<const char*>(v.const_data_ptr());
  d.out = static_cast<char*>(out.data_ptr());
  d.lse = lse.data_ptr<float>();
  d.dtype = toKernelDType(q.scalar_type());
  d.batch = batch;
  d.heads = heads;
  d.kv_heads = kv_heads;
  d.queries = queries;
  d.keys = keys;
  d.dim = q.size(3);
  d.value_dim = v.size(3);
  for (int i = 0; i < 3; ++i) {
    d.q_stride[i] = q.stride(i);
    d.k_stride[i] = k.stride(i);
    d.v_stride[i] = v.stride(i);
    d.out_stride[i] = out.stride(i);
  }
  d.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  d.causal = is_causal;
  const int device = q.device().index();
  ACCEL_RT_CHECK(kernels::normTable().attention(d, currentRuntimeStream(device)), device);
  const Tensor seed = at::empty({}, q.options().dtype(at::kLong));
  const Tensor offset = at::empty({}, q.options().dtype(at::kLong));
  return {batched ? out : out.squeeze(0),
          batched ? lse : lse.squeeze(0),
          Tensor(),
          Tensor(),
          c10::SymInt(queries),
          c10::SymInt(keys),
          seed,
          offset,
          Tensor()};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_scaled_dot_product_fused_attention_overrideable", TORCH_FN(fusedAttention));
  m.impl("_fused_sdp_choice", TORCH_FN(fusedSdpChoice));  // torch._fused_sdp_choice asks too
}

}  // namespace
}  // namespace accel

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &accel::fusedSdpChoice)
}  // namespace at::native
