// The caching allocator's edge to torch: a c10::DeviceAllocator registered for PrivateUse1,
// so that tensors, torch.accelerator.memory_* and torch.accel.memory_* use it.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include "allocator/caching_allocator.h"

namespace accel {

// The allocator of one device (created on first use).
alloc::CachingAllocator& deviceCachingAllocator(c10::DeviceIndex device);
c10::DeviceAllocator* deviceAllocator();
void recordStream(const c10::DataPtr& data_ptr, const c10::Stream& stream);
// An allocator figure in c10's type (the host allocator's stats use it too).
c10::CachingAllocator::Stat toTorch(const alloc::Stat& s);

}  // namespace accel
