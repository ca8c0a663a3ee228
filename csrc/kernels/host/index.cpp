// The indexing family on the host driver: queued on the stream, split over the thread pool
// (accumulations run on one thread, in index order, like ATen's CPU kernels).
#include "kernels/index.h"

#include "kernels/host/plan_executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {

const IndexTable& indexTable() {
  static const IndexTable table = IndexTable::make<PlanExecutor>();
  return table;
}

}  // namespace accel::kernels::host
