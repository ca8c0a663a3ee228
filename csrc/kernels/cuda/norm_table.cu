#include "kernels/norm_abi.h"

namespace accel::kernels::cuda {
// cuda/norm.cu
rt::Error softmax(const SoftmaxDesc& d, rt::Stream stream);
rt::Error softmax_backward(const SoftmaxDesc& d, rt::Stream stream);
rt::Error layer_norm(const LayerNormDesc& d, rt::Stream stream);
rt::Error layer_norm_backward(const LayerNormDesc& d, rt::Stream stream);
}  // namespace accel::kernels::cuda

extern "C" const accel::kernels::NormTable* accel_cuda_norm_table() {
  using namespace accel::kernels;
  static const NormTable table{&cuda::softmax, &cuda::softmax_backward, &cuda::layer_norm,
                               &cuda::layer_norm_backward};
  return &table;
}
