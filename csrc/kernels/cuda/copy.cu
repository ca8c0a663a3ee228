// The copy family, built for the CUDA driver.
#include "kernels/copy.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Copy, copy)
}  // namespace accel::kernels::cuda
