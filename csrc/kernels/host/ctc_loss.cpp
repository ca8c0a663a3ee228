// The CTC loss family on the host driver: its frame steps are short work, run inline.
#include "kernels/ctc_loss.h"

#include "kernels/host/executor.h"
#include "kernels/tables.h"

namespace accel::kernels::host {

ACCEL_DEFINE_TABLE(CtcLoss, ctcLoss)

}  // namespace accel::kernels::host
