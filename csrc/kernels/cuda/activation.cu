// The activation family, built for the CUDA driver.
#include "kernels/activation.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Activation, activation)
}  // namespace accel::kernels::cuda
