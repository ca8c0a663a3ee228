// The binary family, built for the host driver.
#include "kernels/binary.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Binary, binary)
}  // namespace accel::kernels::host
