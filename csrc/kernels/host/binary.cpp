#include "kernels/binary.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error binary(BinaryOp op, const ElementwiseDesc& d, Scalar alpha, rt::Stream stream) {
  return launchBinary<HostExecutor>(op, d, alpha, stream);
}

rt::Error binary_scalar(BinaryOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream) {
  return launchBinaryScalar<HostExecutor>(op, d, rhs, stream);
}

}  // namespace accel::kernels::host
