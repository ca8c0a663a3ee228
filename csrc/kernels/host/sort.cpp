#include "kernels/sort.h"

#include "kernels/host/for_each_executor.h"

namespace accel::kernels::host {

rt::Error sort(const SortDesc& d, rt::Stream stream) {
  return launchSort<ForEachExecutor>(d, stream);
}

}  // namespace accel::kernels::host
