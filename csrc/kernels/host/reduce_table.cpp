#include "kernels/reduce_abi.h"

namespace accel::kernels {
namespace host {
// host/reduce.cpp
rt::Error reduce(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream);
rt::Error cumsum(const ScanDesc& d, rt::Stream stream);
rt::Error nll_loss_forward(const NllLossDesc& d, rt::Stream stream);
rt::Error nll_loss_backward(const NllLossDesc& d, rt::Stream stream);
}  // namespace host

const ReduceTable& hostReduceTable() {
  static const ReduceTable table{&host::reduce, &host::cumsum, &host::nll_loss_forward,
                                 &host::nll_loss_backward};
  return table;
}

}  // namespace accel::kernels
