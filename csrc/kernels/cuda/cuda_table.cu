#include "kernels/cuda/cuda_kernels.h"

// Looked up by kernels::table() through rt::cudaPluginSymbol, so the core library never links
// CUDA.
extern "C" const accel::kernels::KernelTable* accel_cuda_kernel_table() {
  using namespace accel::kernels;
  static const KernelTable table{&cuda::copy, &cuda::fill, &cuda::binary, &cuda::binary_scalar, &cuda::unary, &cuda::compare, &cuda::compare_scalar, &cuda::ternary, &cuda::masked_fill, &cuda::amp_unscale, &cuda::amp_update_scale};
  return &table;
}
