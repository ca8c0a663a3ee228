#include "kernels/kernel_abi.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const KernelTable& table() { return selectTable(hostTable(), "accel_cuda_kernel_table"); }

}  // namespace accel::kernels
