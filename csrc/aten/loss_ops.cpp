// nll_loss_forward / nll_loss_backward (and nll_loss2d over pixels) (1-D or 2-D input, int64
// targets, optional weight, reduction none/mean/sum, ignore_index); cross_entropy decomposes into
// log_softmax and these. The checks and shapes are ATen's; an out-of-range target is found by the
// kernel (device data), which fails the launch with "Target t is out of bounds.".
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <tuple>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/reduce.h"

namespace accel {
namespace {

using at::Tensor;

bool nativeLoss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  const c10::ScalarType t = self.scalar_type();
  return at::isFloatingType(t) && kernelSupports(t) && target.scalar_type() == at::kLong &&
         (!weight || !weight->defined() || weight->scalar_type() == t);
}

void checkInputs(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(no_batch_dim || (self.size(0) == target.size(0)),
              "size mismatch (got input: ", self.sizes(), ", target: ", target.sizes(), ")");
  const int64_t n_classes = self.size(-1);
  TORCH_CHECK(!weight || !weight->defined() || (weight->dim() <= 1 && weight->numel() == n_classes),
              "weight tensor should be defined either for all ", n_classes,
              " classes or no classes but got weight tensor of shape: ", weight->sizes());
}

kernels::NllLossDesc makeDesc(const Tensor& self, const Tensor& target,
                              const std::optional<Tensor>& weight, int64_t reduction,
                              int64_t ignore_index) {
  kernels::NllLossDesc d;
  d.input = static_cast<const char*>(self.const_data_ptr());
  d.target = target.const_data_ptr<int64_t>();
  d.weight =
      weight && weight->defined() ? static_cast<const char*>(weight->const_data_ptr()) : nullptr;
  d.dtype = toKernelDType(self.scalar_type());
  d.n = self.dim() == 1 ? 1 : self.size(0);
  d.c = self.size(-1);
  d.reduction = static_cast<kernels::LossReduction>(reduction);
  d.ignore_index = ignore_index;
  d.error = rt::driver().deviceErrorRecord(self.device().index());
  return d;
}

struct NllLossForward {
  static bool native(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t, int64_t) {
    return nativeLoss(self, target, weight);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
    checkInputs(self, target, weight);
    TORCH_CHECK(reduction >= 0 && reduction <= 2, "nll_loss: invalid reduction ", reduction);
    const Tensor x = self.contiguous(), t = target.contiguous();
    std::optional<Tensor> w;
    if (weight && weight->defined()) w = weight->contiguous();
    const bool per_sample = reduction == 0 && x.dim() == 2;
    Tensor output = per_sample ? at::empty({x.size(0)}, x.options()) : at::empty({}, x.options());
    Tensor total_weight = at::empty({}, x.options());
    if (reduction == 0) total_weight.zero_();
    kernels::NllLossDesc d = makeDesc(x, t, w, reduction, ignore_index);
    d.output = static_cast<char*>(output.data_ptr());
    d.total_weight = static_cast<char*>(total_weight.data_ptr());
    Tensor scratch;
    if (reduction != 0) {
      scratch = at::empty({kernels::nllScratchBytes(d.n)}, x.options().dtype(at::kByte));
      d.scratch = static_cast<char*>(scratch.data_ptr());
    }
    const int device = self.device().index();
    ACCEL_RT_CHECK(kernels::reduceTable().nll_loss_forward(d, currentRuntimeStream(device)),
                   device);
    return {output, total_weight};
  }
};

struct NllLossBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                     const std::optional<Tensor>& weight, int64_t, int64_t,
                     const Tensor& total_weight) {
    return nativeLoss(self, target, weight) && grad_output.scalar_type() == self.scalar_type() &&
           total_weight.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                        const std::optional<Tensor>& weight, int64_t reduction,
                        int64_t ignore_index, const Tensor& total_weight) {
    checkInputs(self, target, weight);
    TORCH_CHECK(total_weight.numel() == 1,
                "expected total_weight to be a single element tensor, got: ", total_weight.sizes(),
                " (", total_weight.numel(), " elements)");
    const Tensor x = self.contiguous(), t = target.contiguous(), g = grad_output.contiguous();
    std::optional<Tensor> w;
    if (weight && weight->defined()) w = weight->contiguous();
    if (reduction == 0 && x.dim() == 2) {
      TORCH_CHECK(g.dim() == 1 && g.size(0) == x.size(0),
                  "Expected a tensor of dimension 1 and tensor.size[0] == ", x.size(0),
                  " but got: dimension ", g.dim(),
                  " and tensor.size[0] == ", g.dim() ? g.size(0) : 0);
    } else {
      TORCH_CHECK(g.numel() == 1,
                  "Expected a single element grad_output tensor, but got: ", g.sizes());
    }
    Tensor grad_input = at::empty(x.sizes(), x.options());
    kernels::NllLossDesc d = makeDesc(x, t, w, reduction, ignore_index);
    d.grad_output = static_cast<const char*>(g.const_data_ptr());
    d.total_weight = const_cast<char*>(static_cast<const char*>(total_weight.const_data_ptr()));
    d.grad_input = static_cast<char*>(grad_input.data_ptr());
    const int device = self.device().index();
    ACCEL_RT_CHECK(kernels::reduceTable().nll_loss_backward(d, currentRuntimeStream(device)),
                   device);
    return grad_input;
  }
};

// nll_loss2d (segmentation): the same kernels over the pixels, with the classes made the last
// dimension ([N, C, H, W] as [N*H*W, C]). Other shapes go to the fallback, for CPU's errors.
bool spatial(const Tensor& self, const Tensor& target) {
  return self.dim() == 4 && target.dim() == 3 && self.size(0) == target.size(0) &&
         self.size(2) == target.size(1) && self.size(3) == target.size(2);
}
Tensor pixels(const Tensor& self) { return self.permute({0, 2, 3, 1}).reshape({-1, self.size(1)}); }

struct NllLoss2dForward {
  static bool native(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t, int64_t) {
    return spatial(self, target) && nativeLoss(self, target, weight);
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
    auto [output, total_weight] = NllLossForward::compute(pixels(self), target.reshape({-1}),
                                                          weight, reduction, ignore_index);
    if (reduction == 0) output = output.view(target.sizes());
    return {output, total_weight};
  }
};

struct NllLoss2dBackward {
  static bool native(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                     const std::optional<Tensor>& weight, int64_t reduction, int64_t,
                     const Tensor& total_weight) {
    return spatial(self, target) && (reduction != 0 || grad_output.sizes() == target.sizes()) &&
           NllLossBackward::native(grad_output, self, target, weight, reduction, 0, total_weight);
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                        const std::optional<Tensor>& weight, int64_t reduction,
                        int64_t ignore_index, const Tensor& total_weight) {
    const Tensor g = reduction == 0 ? grad_output.reshape({-1}) : grad_output;
    const Tensor grad = NllLossBackward::compute(g, pixels(self), target.reshape({-1}), weight,
                                                 reduction, ignore_index, total_weight);
    return grad.view({self.size(0), self.size(2), self.size(3), self.size(1)})
        .permute({0, 3, 1, 2})
        .contiguous();
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<NllLossForward>(m, "nll_loss_forward");
  registerNative<NllLossBackward>(m, "nll_loss_backward");
  registerNative<NllLoss2dForward>(m, "nll_loss2d_forward");
  registerNative<NllLoss2dBackward>(m, "nll_loss2d_backward");
}

}  // namespace
}  // namespace accel
