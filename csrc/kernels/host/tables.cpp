// The host driver's build of every kernel family (each defined in host/<family>.cpp).
#include "kernels/tables.h"

namespace accel::kernels::host {

const Tables& tables() {
  static const Tables all ACCEL_DRIVER_TABLES();
  return all;
}

}  // namespace accel::kernels::host
