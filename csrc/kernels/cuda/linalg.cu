// The linear algebra family on the CUDA driver: a thread per right-hand side.
#include "kernels/linalg.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {

ACCEL_DEFINE_TABLE(Linalg, linalg)

}  // namespace accel::kernels::cuda
