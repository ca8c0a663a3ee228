#include "kernels/blas_abi.h"
#include "kernels/host/host_blas.h"

namespace accel::kernels {

const BlasTable& hostBlasTable() {
  static const BlasTable table{&host::gemm};
  return table;
}

}  // namespace accel::kernels
