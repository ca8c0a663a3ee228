// The sort family, built for the host driver.
#include "kernels/sort.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Sort, sort)
}  // namespace accel::kernels::host
