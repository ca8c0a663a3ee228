// Pinned (page-locked) host memory from the driver, for pin_memory() and for asynchronous
// copies between host and device.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Storage.h>

#include "runtime/driver.h"

namespace accel {

c10::Allocator* pinnedHostAllocator();
bool isPinnedPtr(const void* ptr);
// Keeps a host storage alive until the work now queued on `stream` has run, so an
// asynchronous copy never reads or writes freed host memory.
void keepAliveUntilDone(c10::Storage host_storage, int device, rt::Stream stream);

}  // namespace accel
