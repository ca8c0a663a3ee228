// The im2col family on the CUDA driver: a thread per output element (Executor::forRows).
#include "kernels/im2col.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
namespace {

struct Im2colExecutor : Executor {
  static constexpr int kCol2imChunk = 1;
};

}  // namespace

const Im2colTable& im2colTable() {
  static const Im2colTable table = Im2colTable::make<Im2colExecutor>();
  return table;
}

}  // namespace accel::kernels::cuda
