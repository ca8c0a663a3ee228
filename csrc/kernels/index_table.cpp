#include "kernels/index_abi.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const IndexTable& indexTable() {
  return selectTable(hostIndexTable(), "accel_cuda_index_table");
}

}  // namespace accel::kernels
