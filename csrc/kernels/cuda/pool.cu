// The pooling family on the CUDA driver: a thread per element (Executor::forRows).
#include "kernels/pool.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {

ACCEL_DEFINE_TABLE(Pool, pool)

}  // namespace accel::kernels::cuda
