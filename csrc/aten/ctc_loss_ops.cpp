// _ctc_loss and _ctc_loss_backward (the int[] lengths forms F.ctc_loss reaches), with CPU's
// formulas (ATen/native/LossCTC.cpp). The lengths are host values, so nothing reads device
// data. The targets become the extended label sequence l' (blanks between and around the
// labels, S = 2 * max target length + 1 states per sample) and the log probabilities are
// gathered at l', with native ops; then the CTC kernels (kernels/ctc_loss.h) run the alpha
// recursion, one launch per time frame over all samples and states at once, each step CPU's
// three-term log-sum-exp with its max shift. States past a sample's 2 * L + 1 stay -inf. The
// backward runs the beta recursion from each sample's last frame down, adds exp(alpha + beta)
// into the labels' columns (scatter_add, one max shift per frame) and applies CPU's closing
// formula. float and double, as CPU.
#include <ATen/TensorOperators.h>
#include <ATen/TensorUtils.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <limits>
#include <tuple>
#include <vector>

#include "aten/composed_loss.h"
#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/ctc_loss.h"

namespace accel {
namespace {

using at::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();

// [B, n] rows moved k columns towards higher s (towards lower s when k < 0), `fill` coming in.
Tensor shifted(const Tensor& row, int64_t k, const c10::Scalar& fill) {
  const int64_t n = row.size(1), kept = std::max<int64_t>(n - std::abs(k), 0);
  const Tensor pad = at::full({row.size(0), n - kept}, fill, row.options());
  return k > 0 ? at::cat({pad, row.narrow(1, 0, kept)}, 1)
               : at::cat({row.narrow(1, n - kept, kept), pad}, 1);
}

// The samples' extended labels and what the recursions need of them, all on the device.
struct Labels {
  int64_t batch = 0, frames = 0, states = 0;
  Tensor ext;         // [B, S] l': blank at even s, the (s - 1) / 2-th label at odd s
  Tensor valid;       // [B, S] s < 2 * L + 1
  Tensor skip;        // [B, S] s may come from s - 2: s odd, s >= 3 and l'[s] != l'[s - 2]
  Tensor lp;          // [T, B, S] log_probs at l'
  Tensor target_len;  // [B] L
  Tensor input_len;   // [B] the frames of each sample
};

// CPU's argument checks (ctc_loss_cpu_template), then l' from either target layout: [B, Lmax]
// padded, or the samples' labels concatenated.
Labels labels(const Tensor& log_probs, const Tensor& targets, at::IntArrayRef input_lengths,
              at::IntArrayRef target_lengths, int64_t blank) {
  const at::CheckedFrom c = "ctc_loss_cpu";
  const at::TensorArg log_probs_arg(log_probs, "log_probs", 1), targets_arg(targets, "targets", 2);
  at::checkDim(c, log_probs_arg, 3);
  at::checkDimRange(c, targets_arg, 1, 3);
  Labels l;
  l.frames = log_probs.size(0);
  l.batch = log_probs.size(1);
  const int64_t classes = log_probs.size(2);
  TORCH_CHECK(0 <= blank && blank < classes, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == l.batch,
              "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == l.batch,
              "target_lengths must be of size batch_size");
  int64_t max_len = 0, total = 0;
  std::vector<int64_t> offsets(l.batch);
  for (int64_t b = 0; b < l.batch; ++b) {
    TORCH_CHECK(target_lengths[b] >= 0, "Expected target_lengths to have value at least 0",
                ", but got value ", target_lengths[b], " (while checking arguments for ", c, ")");
    offsets[b] = total;
    total += target_lengths[b];
    max_len = std::max(max_len, target_lengths[b]);
  }
  const auto longs = log_probs.options().dtype(at::kLong);
  const Tensor targets_long = targets.to(at::kLong);
  Tensor padded;  // [B, max_len]
  if (targets.dim() == 1) {
    at::checkSize(c, targets_arg, 0, total);
    // Sample b's s-th label at offsets[b] + s; past its length any in-range index (masked).
    const Tensor idx = (at::tensor(offsets, longs).unsqueeze(1) + at::arange(max_len, longs))
                           .clamp_max(std::max<int64_t>(total - 1, 0));
    padded = total > 0 ? targets_long.index_select(0, idx.flatten()).view({l.batch, max_len})
                       : at::zeros({l.batch, max_len}, longs);
  } else {
    at::checkSize(c, targets_arg, 0, l.batch);
    TORCH_CHECK(targets.size(1) >= max_len, "Expected tensor to have size at least ", max_len,
                " at dimension 1, but got size ", targets.size(1), " for ", targets_arg,
                " (while checking arguments for ", c, ")");
    padded = targets_long.narrow(1, 0, max_len);
  }
  for (int64_t b = 0; b < l.batch; ++b) {
    TORCH_CHECK(input_lengths[b] >= 0, "Expected input_lengths to have value at least 0",
                ", but got value ", input_lengths[b], " (while checking arguments for ", c, ")");
    TORCH_CHECK(input_lengths[b] <= l.frames, "Expected input_lengths to have value at most ",
                l.frames, ", but got value ", input_lengths[b], " (while checking arguments for ",
                c, ")");
  }
  l.states = 2 * max_len + 1;
  const Tensor blanks = at::full({l.batch, 1}, blank, longs);
  // Interleave [blank, label] pairs, then the closing blank.
  l.ext = at::cat(
      {at::stack({blanks.expand({l.batch, max_len}), padded}, 2).view({l.batch, 2 * max_len}),
       blanks},
      1);
  l.target_len = at::tensor(target_lengths.vec(), longs);
  l.input_len = at::tensor(input_lengths.vec(), longs);
  const Tensor s = at::arange(l.states, longs);
  l.valid = s < (2 * l.target_len + 1).unsqueeze(1);
  l.skip = (l.ext != shifted(l.ext, 2, -1)) & (s >= 2);
  l.lp = log_probs.gather(2, l.ext.unsqueeze(0).expand({l.frames, l.batch, l.states}));
  return l;
}

// CPU's log(exp(x1 - m) + exp(x2 - m) + exp(x3 - m)) + m with m their max, 0 when all are -inf.
Tensor logSumExp3(const Tensor& x1, const Tensor& x2, const Tensor& x3) {
  Tensor m = at::maximum(at::maximum(x1, x2), x3);
  m = at::where(m == -kInf, at::zeros({}, m.options()), m);
  return ((x1 - m).exp() + (x2 - m).exp() + (x3 - m).exp()).log() + m;
}

Tensor negInf(const Tensor& like) { return at::full({}, -kInf, like.options()); }

// The recursions' descriptor: l's masks (contiguous [B, S] bools) and log probabilities, with
// `skip` the alpha's or the beta's skip mask.
kernels::CtcDesc desc(const Labels& l, const Tensor& skip) {
  kernels::CtcDesc d;
  d.dtype = toKernelDType(l.lp.scalar_type());
  d.frames = l.frames;
  d.batch = l.batch;
  d.states = l.states;
  d.lp = static_cast<const char*>(l.lp.const_data_ptr());
  d.valid = l.valid.const_data_ptr<bool>();
  d.skip = skip.const_data_ptr<bool>();
  return d;
}

void launch(rt::Error (*entry)(const kernels::CtcDesc&, rt::Stream), const kernels::CtcDesc& d,
            const Tensor& on) {
  const int device = on.device().index();
  ACCEL_RT_CHECK(entry(d, currentRuntimeStream(device)), device);
}

bool nativeTypes(const Tensor& log_probs, const Tensor& targets) {
  const auto t = log_probs.scalar_type();
  const auto i = targets.scalar_type();
  return (t == at::kFloat || t == at::kDouble) && (i == at::kLong || i == at::kInt);
}

struct CtcLoss {
  static constexpr int kOutputs = 2;
  static bool native(const Tensor& log_probs, const Tensor& targets, at::IntArrayRef,
                     at::IntArrayRef, int64_t, bool) {
    return nativeTypes(log_probs, targets);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& log_probs, const Tensor& targets,
                                            at::IntArrayRef input_lengths,
                                            at::IntArrayRef target_lengths, int64_t blank, bool,
                                            const Output& nll_out, const Output& alpha_out) {
    const Labels l = labels(log_probs, targets, input_lengths, target_lengths, blank);
    const Tensor ninf = negInf(log_probs);
    const Tensor log_alpha = at::empty({l.batch, l.frames, l.states}, log_probs.options());
    kernels::CtcDesc d = desc(l, l.skip);
    d.alpha = static_cast<char*>(log_alpha.data_ptr());
    launch(kernels::ctcLossTable().alpha, d, log_probs);
    // -log(alpha[T_b - 1, 2L] + alpha[T_b - 1, 2L - 1]); an empty target has only the first.
    const Tensor last_t = (l.input_len - 1).clamp_min(0);
    Tensor nll;
    if (l.frames > 0) {
      const Tensor last =
          log_alpha.gather(1, last_t.view({l.batch, 1, 1}).expand({l.batch, 1, l.states}))
              .squeeze(1);  // [B, S]
      const Tensor l1 = last.gather(1, (2 * l.target_len).unsqueeze(1)).squeeze(1);
      const Tensor l2 = last.gather(1, (2 * l.target_len - 1).clamp_min(0).unsqueeze(1)).squeeze(1);
      const Tensor pair = logSumExp3(l1, l2, ninf.expand_as(l1));
      nll = -at::where(l.target_len == 0, l1, pair);
    } else {
      nll = at::zeros({l.batch}, log_probs.options());
    }
    // No frames: likelihood 1 for an empty target, else 0.
    nll = at::where(l.input_len == 0,
                    at::where(l.target_len == 0, at::zeros({}, nll.options()), -ninf), nll);
    return {into(nll_out, nll), into(alpha_out, log_alpha)};
  }
};

struct CtcLossBackward {
  static bool native(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                     at::IntArrayRef, at::IntArrayRef, const Tensor& nll, const Tensor& log_alpha,
                     int64_t, bool) {
    const auto t = log_probs.scalar_type();
    return nativeTypes(log_probs, targets) && grad.scalar_type() == t && nll.scalar_type() == t &&
           log_alpha.scalar_type() == t;
  }
  static Tensor compute(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                        at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                        const Tensor& nll, const Tensor& log_alpha, int64_t blank,
                        bool zero_infinity, const Output& out) {
    const Labels l = labels(log_probs, targets, input_lengths, target_lengths, blank);
    const Tensor ninf = negInf(log_probs);
    const Tensor s = at::arange(l.states, l.ext.options());
    const Tensor two_l = (2 * l.target_len).unsqueeze(1);
    // beta at each sample's last frame: the closing blank and the last label.
    const Tensor starts = l.valid & ((s == two_l) | (s == two_l - 1));
    // From s + 1 when s < 2L (beyond, beta is -inf anyway); from s + 2 when s + 2 may skip to s.
    const Tensor skip_back = shifted(l.skip & l.valid, -2, false);
    const Tensor betas = at::empty({l.frames, l.batch, l.states}, log_probs.options());
    kernels::CtcDesc d = desc(l, skip_back);
    d.starts = starts.const_data_ptr<bool>();
    d.input_len = l.input_len.const_data_ptr<int64_t>();
    d.beta = static_cast<char*>(betas.data_ptr());
    launch(kernels::ctcLossTable().beta, d, log_probs);
    const Tensor shape_like = at::zeros_like(log_probs, at::MemoryFormat::Contiguous);
    if (l.frames == 0) return into(out, shape_like);
    // log sum over the states s with l'[s] = c of alpha * beta, per frame and class.
    const Tensor ab = log_alpha.permute({1, 0, 2}) + betas;  // [T, B, S]
    Tensor m = at::amax(ab, {2}, true);
    m = at::where(m == -kInf, at::zeros({}, m.options()), m);
    const Tensor index = l.ext.unsqueeze(0).expand_as(ab);
    const Tensor lcab = shape_like.scatter_add(2, index, (ab - m).exp()).log() + m;
    const Tensor nll3 = nll.view({1, l.batch, 1});
    Tensor g = (log_probs.exp() - (lcab + nll3 - log_probs).exp()) * grad.view({1, l.batch, 1});
    const Tensor frame = at::arange(l.frames, l.ext.options()).view({l.frames, 1, 1});
    Tensor keep = frame < l.input_len.view({1, l.batch, 1});
    if (zero_infinity) keep = keep & (nll3 != -ninf);
    return into(out, at::where(keep, g, at::zeros({}, g.options())));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<CtcLoss>(m, "_ctc_loss", nullptr, "_ctc_loss.out");
  registerForms<CtcLossBackward>(m, "_ctc_loss_backward", nullptr, "_ctc_loss_backward.out");
}

}  // namespace
}  // namespace accel
