// Input errors that kernels find on the device: an out-of-range target or index. A kernel
// records the first one here instead of trapping (which on CUDA would end the context of the
// whole process, torch.cuda included) or throwing; the driver reports it as a failure of the
// next synchronisation on that device, with a message that names the value, and clears it, so
// the device and its streams stay usable. Knows no torch.
#pragma once

#include <cstdint>
#include <string>

namespace accel::rt {

enum class DeviceErrorKind : int32_t {
  None = 0,
  TargetOutOfBounds = 1,  // nll_loss: value is the target, bound the number of classes
  IndexOutOfBounds = 2,   // value is the index, bound the size of its dimension
};

// Written by kernels (kind first, by compare-and-swap, so the first error wins), read and
// cleared by the driver after the device's work completed.
struct DeviceErrorRecord {
  int32_t kind = 0;
  int32_t reserved = 0;
  int64_t value = 0;
  int64_t bound = 0;
};

// The message of a record ("Target 7 is out of bounds.", as ATen words it). Inline: the CUDA
// plugin links no runtime library.
inline std::string describe(const DeviceErrorRecord& r) {
  switch (static_cast<DeviceErrorKind>(r.kind)) {
    case DeviceErrorKind::None: return "";
    case DeviceErrorKind::TargetOutOfBounds:
      return "Target " + std::to_string(r.value) + " is out of bounds.";
    case DeviceErrorKind::IndexOutOfBounds:
      return "index " + std::to_string(r.value) + " is out of bounds for dimension with size " +
             std::to_string(r.bound);
  }
  return "device-side error " + std::to_string(r.kind);
}

// Takes a pending record: returns its message and clears it, or "" when none is set.
inline std::string takeDeviceError(DeviceErrorRecord& record) {
  if (__atomic_load_n(&record.kind, __ATOMIC_ACQUIRE) == 0) return "";
  std::string message = describe(record);
  record.value = record.bound = 0;
  __atomic_store_n(&record.kind, 0, __ATOMIC_RELEASE);
  return message;
}

}  // namespace accel::rt
