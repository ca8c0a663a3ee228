// The amp family, built for the host driver.
#include "kernels/amp.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Amp, amp)
}  // namespace accel::kernels::host
