#include "kernels/ternary.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error ternary(TernaryOp op, const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  return launchTernary<HostExecutor>(op, d, value, stream);
}

rt::Error masked_fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  return launchMaskedFill<HostExecutor>(d, value, stream);
}

}  // namespace accel::kernels::host
