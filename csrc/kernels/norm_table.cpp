#include "kernels/norm_abi.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const NormTable& normTable() { return selectTable(hostNormTable(), "accel_cuda_norm_table"); }

}  // namespace accel::kernels
