// The indexing family on the CUDA driver: grid-stride kernels; accumulations use atomics.
#include "kernels/index.h"

#include "kernels/cuda/plan_executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {

const IndexTable& indexTable() {
  static const IndexTable table = IndexTable::make<PlanExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
