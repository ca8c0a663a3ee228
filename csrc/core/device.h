// Device bookkeeping for the torch layer: count, the thread's current device, checks.
#pragma once

#include <c10/core/Device.h>

namespace accel {

c10::DeviceIndex deviceCount();
c10::DeviceIndex currentDevice();
void setCurrentDevice(c10::DeviceIndex index);
// Raises torch.AcceleratorError (as CUDA's invalid device ordinal) for an index outside
// 0..device_count()-1.
void checkDeviceIndex(c10::DeviceIndex index);
// The device an index names: -1 (no index, as in torch.Stream(device="accel")) is the calling
// thread's current device, as in CUDA; any other index is checked as above.
c10::DeviceIndex resolveDevice(c10::DeviceIndex index);
// Raises torch's bad-fork error when the runtime was initialised before a fork.
void checkNotForked();

}  // namespace accel
