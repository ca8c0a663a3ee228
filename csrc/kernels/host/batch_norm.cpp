// The batch norm family on the host driver: batch_norm.h's passes with the host's plan.
#include "kernels/batch_norm.h"

#include "kernels/host/plan_executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {

const BatchNormTable& batchNormTable() {
  static const BatchNormTable table = BatchNormTable::make<PlanExecutor>();
  return table;
}

}  // namespace accel::kernels::host
