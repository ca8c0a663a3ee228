// The activation family, built for the host driver.
#include "kernels/activation.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Activation, activation)
}  // namespace accel::kernels::host
