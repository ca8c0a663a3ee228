#include "kernels/sort_abi.h"

namespace accel::kernels {
namespace host {
rt::Error sort(const SortDesc& d, rt::Stream stream);
}

const SortTable& hostSortTable() {
  static const SortTable table{&host::sort};
  return table;
}

}  // namespace accel::kernels
