// The optimizer family, built for the host driver: AdamOp runs a chunk per index.
#include "kernels/optimizer.h"

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
namespace {

struct OptimizerExecutor : Executor {
  static constexpr int64_t kAdamRun = 1024;
};

}  // namespace

const OptimizerTable& optimizerTable() {
  static const OptimizerTable table = OptimizerTable::make<OptimizerExecutor>();
  return table;
}

}  // namespace accel::kernels::host
