// The sort family, built for the host driver (with the host's numbers for planSort).
#include "kernels/sort.h"
#include "kernels/host/plan_executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {

const SortTable& sortTable() {
  static const SortTable table = SortTable::make<PlanExecutor>();
  return table;
}

}  // namespace accel::kernels::host
