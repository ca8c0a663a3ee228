#include "kernels/compare.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error compare(CompareOp op, const ElementwiseDesc& d, rt::Stream stream) {
  return launchCompare<HostExecutor>(op, d, stream);
}

rt::Error compare_scalar(CompareOp op, const ElementwiseDesc& d, Scalar rhs, rt::Stream stream) {
  return launchCompareScalar<HostExecutor>(op, d, rhs, stream);
}

}  // namespace accel::kernels::host
