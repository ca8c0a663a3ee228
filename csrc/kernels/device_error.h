// How kernels report an input error found on the device (runtime/device_error.h): the first
// report wins; later ones leave the record as it is.
#pragma once

#include <cstdint>

#include "kernels/macros.h"
#include "runtime/device_error.h"

namespace accel::kernels {

ACCEL_HD inline void recordDeviceError(rt::DeviceErrorRecord* record, rt::DeviceErrorKind kind,
                                       int64_t value, int64_t bound) {
#ifdef __CUDA_ARCH__
  if (atomicCAS(reinterpret_cast<int*>(&record->kind), 0, static_cast<int>(kind)) == 0) {
    record->value = value;
    record->bound = bound;
    __threadfence_system();  // the record is host memory, read after a synchronisation
  }
#else
  int32_t none = 0;
  if (__atomic_compare_exchange_n(&record->kind, &none, static_cast<int32_t>(kind), false,
                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    record->value = value;
    record->bound = bound;
  }
#endif
}

}  // namespace accel::kernels
