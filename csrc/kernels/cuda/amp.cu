// The amp family, built for the CUDA driver.
#include "kernels/amp.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Amp, amp)
}  // namespace accel::kernels::cuda
