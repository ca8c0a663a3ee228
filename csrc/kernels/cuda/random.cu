// The random family, built for the CUDA driver.
#include "kernels/random.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Random, random)
}  // namespace accel::kernels::cuda
