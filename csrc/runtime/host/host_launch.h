// How the kernel layer launches host kernels: asynchronously, in order on a stream of the
// host driver (the handle nativeStream() returns, or the Stream itself).
#pragma once

#include <functional>

#include "runtime/driver.h"

namespace accel::rt::host {

// Queues `work` on `stream`. An exception thrown by `work` becomes the device's sticky
// LaunchFailure, reported by the next synchronize. Under TORCH_ACCEL_LAUNCH_BLOCKING=1 the
// work runs on the caller, after the stream drains, and a failure is also returned here.
Error enqueue(Stream stream, std::function<void()> work);

}  // namespace accel::rt::host
