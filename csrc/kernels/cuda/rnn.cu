// The recurrent-cell family, built for the CUDA driver.
#include "kernels/rnn.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {
ACCEL_DEFINE_TABLE(Rnn, rnn)
}  // namespace accel::kernels::cuda
