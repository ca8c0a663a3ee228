#include "kernels/cuda/cuda_blas.h"

// Looked up by kernels::blasTable() through rt::cudaPluginSymbol.
extern "C" const accel::kernels::BlasTable* accel_cuda_blas_table() {
  using namespace accel::kernels;
  static const BlasTable table{&cuda::gemm};
  return &table;
}
