#include "kernels/cuda/cuda_kernels.h"

// Looked up by kernels::table() through rt::cudaPluginSymbol, so the core library never links
// CUDA.
extern "C" const accel::kernels::KernelTable* accel_cuda_kernel_table() {
  using namespace accel::kernels;
  static const KernelTable table{&cuda::copy, &cuda::fill, &cuda::binary, &cuda::binary_scalar};
  return &table;
}
