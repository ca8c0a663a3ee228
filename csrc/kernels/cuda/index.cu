// The indexing family on the CUDA driver: grid-stride kernels; accumulations use atomics.
#include "kernels/index.h"

#include "kernels/cuda/plan_executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

struct IndexExecutor : PlanExecutor {
  static constexpr int64_t kIndexRowChunk = 1;  // a thread per element, coalesced
};

}  // namespace

const IndexTable& indexTable() {
  static const IndexTable table = IndexTable::make<IndexExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
