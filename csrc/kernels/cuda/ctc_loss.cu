// The CTC loss family on the CUDA driver: a thread per (sample, state) per frame.
#include "kernels/ctc_loss.h"

#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"

namespace accel::kernels::cuda {

ACCEL_DEFINE_TABLE(CtcLoss, ctcLoss)

}  // namespace accel::kernels::cuda
