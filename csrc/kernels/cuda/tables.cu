// The CUDA driver's build of every kernel family (each defined in cuda/<family>.cu), exported
// so that kernels::activeTables() finds it without the core library linking CUDA.
#include "kernels/tables.h"

extern "C" const accel::kernels::Tables* accel_cuda_tables() {
  using namespace accel::kernels::cuda;
  static const accel::kernels::Tables all ACCEL_DRIVER_TABLES();
  return &all;
}
