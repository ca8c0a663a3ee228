// The optimizer family, built for the host driver: the optimizer ops run a chunk per index.
#include "kernels/optimizer.h"

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
namespace {

struct OptimizerExecutor : Executor {
  static constexpr int64_t kOptimizerRun = 1024;
};

}  // namespace

const OptimizerTable& optimizerTable() {
  static const OptimizerTable table = OptimizerTable::make<OptimizerExecutor>();
  return table;
}

}  // namespace accel::kernels::host
