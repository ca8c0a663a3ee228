#include "kernels/host/host_kernels.h"

namespace accel::kernels {

const KernelTable& hostTable() {
  static const KernelTable table{&host::copy, &host::fill, &host::binary, &host::binary_scalar};
  return table;
}

}  // namespace accel::kernels
