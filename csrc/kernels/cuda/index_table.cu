#include "kernels/cuda/index_kernels.h"

// Looked up by kernels::indexTable() through rt::cudaPluginSymbol.
extern "C" const accel::kernels::IndexTable* accel_cuda_index_table() {
  using namespace accel::kernels;
  static const IndexTable table{&cuda::index,   &cuda::index_bounds, &cuda::nonzero_count,
                                &cuda::nonzero, &cuda::triangle,     &cuda::arange};
  return &table;
}
