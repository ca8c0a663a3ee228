#include "kernels/sort_abi.h"

namespace accel::kernels::cuda {
rt::Error sort(const SortDesc& d, rt::Stream stream);  // sort.cu
}

// Looked up by kernels::sortTable() through rt::cudaPluginSymbol.
extern "C" const accel::kernels::SortTable* accel_cuda_sort_table() {
  static const accel::kernels::SortTable table{&accel::kernels::cuda::sort};
  return &table;
}
