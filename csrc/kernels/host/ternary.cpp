// The ternary family, built for the host driver.
#include "kernels/ternary.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Ternary, ternary)
}  // namespace accel::kernels::host
