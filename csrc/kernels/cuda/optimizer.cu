// The optimizer family, built for the CUDA driver: the optimizer ops run one element per thread.
#include "kernels/optimizer.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

struct OptimizerExecutor : Executor {
  static constexpr int64_t kOptimizerRun = 1;
};

}  // namespace

const OptimizerTable& optimizerTable() {
  static const OptimizerTable table = OptimizerTable::make<OptimizerExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
