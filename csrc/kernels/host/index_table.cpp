#include "kernels/host/index_kernels.h"

namespace accel::kernels {

const IndexTable& hostIndexTable() {
  static const IndexTable table{&host::index,   &host::index_bounds, &host::nonzero_count,
                                &host::nonzero, &host::triangle,     &host::arange};
  return table;
}

}  // namespace accel::kernels
