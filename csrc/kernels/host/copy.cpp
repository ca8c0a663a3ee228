#include "kernels/copy.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error copy(const ElementwiseDesc& d, rt::Stream stream) {
  return launchCopy<HostExecutor>(d, stream);
}

}  // namespace accel::kernels::host
