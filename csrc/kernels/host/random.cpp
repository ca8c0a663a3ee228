// The random family, built for the host driver.
#include "kernels/random.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Random, random)
}  // namespace accel::kernels::host
