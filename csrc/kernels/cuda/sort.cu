// The sort family, built for the CUDA driver.
#include "kernels/sort.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Sort, sort)
}  // namespace accel::kernels::cuda
