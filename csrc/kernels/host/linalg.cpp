// The linear algebra family on the host driver: right-hand sides split over the pool.
#include "kernels/linalg.h"

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {

ACCEL_DEFINE_TABLE(Linalg, linalg)

}  // namespace accel::kernels::host
