#include "kernels/random.h"
#include "kernels/table_select.h"

namespace accel::kernels {

const RandomTable& randomTable() {
  return selectTable(hostRandomTable(), "accel_cuda_random_table");
}

uint64_t randomGroupsReserved(RandomKind kind, DType out, int64_t numel, uint64_t range) {
  const int per_group = elementsPerGroup(kind, out, range);
  const uint64_t groups = (static_cast<uint64_t>(numel) + per_group - 1) / per_group;
  return (groups + 3) / 4 * 4;
}

}  // namespace accel::kernels
