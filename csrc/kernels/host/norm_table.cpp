#include "kernels/norm_abi.h"

namespace accel::kernels {
namespace host {
// host/norm.cpp
rt::Error softmax(const SoftmaxDesc& d, rt::Stream stream);
rt::Error softmax_backward(const SoftmaxDesc& d, rt::Stream stream);
rt::Error layer_norm(const LayerNormDesc& d, rt::Stream stream);
rt::Error layer_norm_backward(const LayerNormDesc& d, rt::Stream stream);
}  // namespace host

const NormTable& hostNormTable() {
  static const NormTable table{&host::softmax, &host::softmax_backward, &host::layer_norm,
                               &host::layer_norm_backward};
  return table;
}

}  // namespace accel::kernels
