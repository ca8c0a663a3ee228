// The unary family, built for the host driver.
#include "kernels/unary.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Unary, unary)
}  // namespace accel::kernels::host
