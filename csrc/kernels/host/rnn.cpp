// The recurrent-cell family, built for the host driver.
#include "kernels/rnn.h"
#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {
ACCEL_DEFINE_TABLE(Rnn, rnn)
}  // namespace accel::kernels::host
