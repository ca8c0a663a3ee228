// The indexing family on the host driver: queued on the stream, split over the thread pool
// (accumulations run on one thread, in index order, like ATen's CPU kernels); indexed rows
// run as runs of up to 4096 elements.
#include "kernels/index.h"

#include "kernels/host/plan_executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
namespace {

struct IndexExecutor : PlanExecutor {
  static constexpr int64_t kIndexRowChunk = 4096;  // runs of a row, vectorised (index.h)
};

}  // namespace

const IndexTable& indexTable() {
  static const IndexTable table = IndexTable::make<IndexExecutor>();
  return table;
}

}  // namespace accel::kernels::host
