#include "kernels/reduce_abi.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const ReduceTable& reduceTable() {
  return selectTable(hostReduceTable(), "accel_cuda_reduce_table");
}

}  // namespace accel::kernels
