// The unary family, built for the CUDA driver.
#include "kernels/unary.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Unary, unary)
}  // namespace accel::kernels::cuda
