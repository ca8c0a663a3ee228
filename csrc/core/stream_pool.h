// Streams as torch sees them. Like CUDA: per device a default stream (id 0) and, for each
// priority, a pool of streams handed out round-robin and created on first use. The current
// stream belongs to the calling thread.
#pragma once

#include <c10/core/Stream.h>

#include "runtime/driver.h"

namespace accel {

constexpr int kStreamsPerPool = 32;

c10::Stream defaultStream(c10::DeviceIndex device);
c10::Stream currentStream(c10::DeviceIndex device);
void setCurrentStream(const c10::Stream& stream);
// high_priority picks the high-priority pool.
c10::Stream streamFromPool(c10::DeviceIndex device, bool high_priority);
// A stream made outside torch (torch.accel.ExternalStream), from its native handle; the same
// handle gives the same stream.
c10::Stream externalStream(c10::DeviceIndex device, void* native);
int streamPriority(const c10::Stream& stream);

// The runtime stream behind a c10::Stream of type PrivateUse1.
rt::Stream runtimeStream(const c10::Stream& stream);
// The runtime stream of the current stream of `device`.
rt::Stream currentRuntimeStream(c10::DeviceIndex device);

}  // namespace accel
