#include "kernels/fill.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error fill(const ElementwiseDesc& d, Scalar value, rt::Stream stream) {
  return launchFill<HostExecutor>(d, value, stream);
}

}  // namespace accel::kernels::host
