#include "kernels/host/host_kernels.h"

namespace accel::kernels {

const KernelTable& hostTable() {
  static const KernelTable table{&host::copy, &host::fill, &host::binary, &host::binary_scalar, &host::unary, &host::compare, &host::compare_scalar, &host::ternary, &host::masked_fill, &host::amp_unscale, &host::amp_update_scale};
  return table;
}

}  // namespace accel::kernels
