#include "kernels/sort.h"

#include "kernels/cuda/for_each_executor.cuh"

namespace accel::kernels::cuda {

rt::Error sort(const SortDesc& d, rt::Stream stream) {
  return launchSort<ForEachExecutor>(d, stream);
}

}  // namespace accel::kernels::cuda

// Looked up by kernels::sortTable() through rt::cudaPluginSymbol.
extern "C" const accel::kernels::SortTable* accel_cuda_sort_table() {
  static const accel::kernels::SortTable table{&accel::kernels::cuda::sort};
  return &table;
}
