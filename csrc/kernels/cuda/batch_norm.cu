// The batch norm family on the CUDA driver: batch_norm.h's passes with the device's plan.
#include "kernels/batch_norm.h"

#include "kernels/cuda/plan_executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {

const BatchNormTable& batchNormTable() {
  static const BatchNormTable table = BatchNormTable::make<PlanExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
