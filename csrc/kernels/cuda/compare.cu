// The compare family, built for the CUDA driver.
#include "kernels/compare.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Compare, compare)
}  // namespace accel::kernels::cuda
