// The binary family, built for the CUDA driver.
#include "kernels/binary.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Binary, binary)
}  // namespace accel::kernels::cuda
