// The copy family, built for the host driver.
#include "kernels/copy.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Copy, copy)
}  // namespace accel::kernels::host
