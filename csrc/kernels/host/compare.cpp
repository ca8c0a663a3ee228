// The compare family, built for the host driver.
#include "kernels/compare.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Compare, compare)
}  // namespace accel::kernels::host
