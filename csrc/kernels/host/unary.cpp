#include "kernels/unary.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error unary(UnaryOp op, const ElementwiseDesc& d, const UnaryParams& p, rt::Stream stream) {
  return launchUnary<HostExecutor>(op, d, p, stream);
}

}  // namespace accel::kernels::host
