#include "kernels/blas_abi.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const BlasTable& blasTable() { return selectTable(hostBlasTable(), "accel_cuda_blas_table"); }

}  // namespace accel::kernels
