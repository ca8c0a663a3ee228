#include "kernels/sort.h"

#include "kernels/cuda/for_each_executor.cuh"

namespace accel::kernels::cuda {

rt::Error sort(const SortDesc& d, rt::Stream stream) {
  return launchSort<ForEachExecutor>(d, stream);
}

}  // namespace accel::kernels::cuda
