#include "kernels/reduce_abi.h"

namespace accel::kernels::cuda {
// cuda/reduce.cu
rt::Error reduce(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream);
rt::Error cumsum(const ScanDesc& d, rt::Stream stream);
rt::Error nll_loss_forward(const NllLossDesc& d, rt::Stream stream);
rt::Error nll_loss_backward(const NllLossDesc& d, rt::Stream stream);
}  // namespace accel::kernels::cuda

extern "C" const accel::kernels::ReduceTable* accel_cuda_reduce_table() {
  using namespace accel::kernels;
  static const ReduceTable table{&cuda::reduce, &cuda::cumsum, &cuda::nll_loss_forward,
                                 &cuda::nll_loss_backward};
  return &table;
}
