#include "kernels/sort_abi.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const SortTable& sortTable() { return selectTable(hostSortTable(), "accel_cuda_sort_table"); }

}  // namespace accel::kernels
