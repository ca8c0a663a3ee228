// Autocast for accel (torch.autocast("accel", dtype=torch.bfloat16 | torch.float16)): the
// AutocastPrivateUse1 key gets CUDA's policy, from the op lists PyTorch shares between
// backends (ATen/autocast_mode.h): matrix products and convolutions run in the lower
// precision, numerically sensitive ops (softmax, norms, losses, exp/log, ...) in fp32, and
// mixed-dtype ops promote to the widest input type. Every other op falls through.
#include <ATen/autocast_mode.h>
#include <torch/library.h>
#include <torch/version.h>

namespace accel {
namespace {

using at::Scalar;
using at::ScalarType;
using at::Tensor;
using c10::IntArrayRef;
#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 13
// Named in the op lists' signatures of torch < 2.13, which still autocast the Dimname
// overloads (2.13 removed named tensors, and DimnameList with them).
using at::DimnameList;
#endif

// What CUDA answers for binary_cross_entropy under autocast: it is unsafe in 16 bits.
Tensor binaryCrossEntropyBanned(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                                int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
              "layer.\nIn this case, combine the two layers using "
              "torch.nn.functional.binary_cross_entropy_with_logits\nor "
              "torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
              "BCEWithLogits are\nsafe to autocast.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define ACCEL_LOWER_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
  AT_FORALL_LOWER_PRECISION_FP(ACCEL_LOWER_PRECISION)
#undef ACCEL_LOWER_PRECISION

#define ACCEL_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
  AT_FORALL_FP32(ACCEL_FP32)
#undef ACCEL_FP32

#define ACCEL_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
  AT_FORALL_FP32_SET_OPT_DTYPE(ACCEL_FP32_SET_OPT_DTYPE)
#undef ACCEL_FP32_SET_OPT_DTYPE

#define ACCEL_FP32_APPEND_DTYPE(REDISPATCH_FUNC, REGISTER_NAME, REGISTER_SIGNATURE, \
                                REDISPATCH_SIGNATURE, POLICY)                       \
  KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE(                              \
      REDISPATCH_FUNC, REGISTER_NAME, REGISTER_SIGNATURE, REDISPATCH_SIGNATURE, POLICY)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(ACCEL_FP32_APPEND_DTYPE)
#undef ACCEL_FP32_APPEND_DTYPE

#define ACCEL_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_PROMOTE(ACCEL_PROMOTE)
#undef ACCEL_PROMOTE

  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binaryCrossEntropyBanned));
}

}  // namespace
}  // namespace accel
