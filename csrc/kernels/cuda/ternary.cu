// The ternary family, built for the CUDA driver.
#include "kernels/ternary.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Ternary, ternary)
}  // namespace accel::kernels::cuda
