// The pooling family on the host driver: whole rows per call (Executor::forRows), split over
// the thread pool.
#include "kernels/pool.h"

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {

ACCEL_DEFINE_TABLE(Pool, pool)

}  // namespace accel::kernels::host
