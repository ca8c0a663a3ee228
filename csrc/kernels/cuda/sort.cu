// The sort family, built for the CUDA driver (with the device's numbers for planSort).
#include "kernels/cuda/plan_executor.cuh"
#include "kernels/sort.h"
#include "kernels/tables.h"

namespace accel::kernels::cuda {

const SortTable& sortTable() {
  static const SortTable table = SortTable::make<PlanExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
