#include "core/device_allocator.h"

#include <memory>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel {
namespace {

// Blocks are 512-aligned, so the low bits of the deleter context carry the device index
// and freeing needs no lookup.
constexpr uintptr_t kDeviceBits = alloc::CachingAllocator::kMinBlockSize - 1;
static_assert(kDeviceBits >= 255, "device index must fit in the alignment bits");

// torch.profiler(profile_memory=True) sees every allocation and free, with the totals after.
void reportToProfiler(void* ptr, int64_t bytes, c10::DeviceIndex device) {
  const alloc::DeviceStats s = deviceCachingAllocator(device).stats();
  c10::reportMemoryUsageToProfiler(ptr, bytes, s.allocated_bytes[alloc::kAggregate].current,
                                   s.reserved_bytes[alloc::kAggregate].current,
                                   c10::Device(c10::DeviceType::PrivateUse1, device));
}

void deleteBlock(void* ctx) {
  auto bits = reinterpret_cast<uintptr_t>(ctx);
  auto device = static_cast<c10::DeviceIndex>(bits & kDeviceBits);
  void* ptr = reinterpret_cast<void*>(bits & ~kDeviceBits);
  alloc::CachingAllocator& allocator = deviceCachingAllocator(device);
  if (C10_UNLIKELY(c10::memoryProfilingEnabled())) {
    void* base = nullptr;
    size_t size = 0;
    allocator.lookup(ptr, &base, &size);
    allocator.free(ptr);
    reportToProfiler(ptr, -static_cast<int64_t>(size), device);
    return;
  }
  allocator.free(ptr);
}

c10::CachingDeviceAllocator::DeviceStats toTorch(const alloc::DeviceStats& s) {
  c10::CachingDeviceAllocator::DeviceStats out;
  auto copyArray = [](c10::CachingAllocator::StatArray& dst, const alloc::StatArray& src) {
    for (size_t i = 0; i < src.size(); ++i) dst[i] = accel::toTorch(src[i]);
  };
  copyArray(out.allocation, s.allocation);
  copyArray(out.segment, s.segment);
  copyArray(out.active, s.active);
  copyArray(out.inactive_split, s.inactive_split);
  copyArray(out.allocated_bytes, s.allocated_bytes);
  copyArray(out.reserved_bytes, s.reserved_bytes);
  copyArray(out.active_bytes, s.active_bytes);
  copyArray(out.inactive_split_bytes, s.inactive_split_bytes);
  copyArray(out.requested_bytes, s.requested_bytes);
  out.num_alloc_retries = s.num_alloc_retries;
  out.num_ooms = s.num_ooms;
  out.num_sync_all_streams = s.num_sync_all_streams;
  out.num_device_alloc = s.num_device_alloc;
  out.num_device_free = s.num_device_free;
  out.oversize_allocations = accel::toTorch(s.oversize_allocations);
  out.oversize_segments = accel::toTorch(s.oversize_segments);
  out.max_split_size = s.max_split_size;
  return out;
}

struct AccelDeviceAllocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    checkNotForked();
    c10::DeviceIndex device = currentDevice();
    c10::Device dev(c10::DeviceType::PrivateUse1, device);
    if (nbytes == 0) return {nullptr, nullptr, &deleteBlock, dev};
    void* ptr = nullptr;
    try {
      ptr = deviceCachingAllocator(device).malloc(nbytes, currentRuntimeStream(device));
    } catch (const alloc::OutOfMemory& e) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "accel out of memory. ", e.what());
    }
    if (C10_UNLIKELY(c10::memoryProfilingEnabled())) {
      void* base = nullptr;
      size_t size = 0;
      deviceCachingAllocator(device).lookup(ptr, &base, &size);
      reportToProfiler(ptr, static_cast<int64_t>(size), device);
    }
    void* ctx = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(ptr) | device);
    return {ptr, ctx, &deleteBlock, dev};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    c10::DeviceIndex device = currentDevice();
    ACCEL_RT_CHECK(rt::driver().memcpyAsync(dest, src, count, rt::MemcpyKind::DeviceToDevice,
                                            currentRuntimeStream(device)),
                   device);
  }

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override {
    for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) deviceCachingAllocator(d).emptyCache();
  }
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    accel::recordStream(ptr, stream);
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    return toTorch(deviceCachingAllocator(device).stats());
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    deviceCachingAllocator(device).resetAccumulatedStats();
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    deviceCachingAllocator(device).resetPeakStats();
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    device = resolveDevice(device);
    size_t free_bytes = 0, total = 0;
    ACCEL_RT_CHECK(rt::driver().memGetInfo(device, &free_bytes, &total), device);
    return {free_bytes, total};
  }
};

AccelDeviceAllocator g_allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace

alloc::CachingAllocator& deviceCachingAllocator(c10::DeviceIndex device) {
  static std::vector<std::unique_ptr<alloc::CachingAllocator>> allocators = [] {
    std::vector<std::unique_ptr<alloc::CachingAllocator>> v;
    for (int i = 0; i < deviceCount(); ++i)
      v.push_back(std::make_unique<alloc::CachingAllocator>(rt::driver(), i));
    return v;
  }();
  return *allocators[resolveDevice(device)];
}

c10::DeviceAllocator* deviceAllocator() { return &g_allocator; }

void recordStream(const c10::DataPtr& data_ptr, const c10::Stream& stream) {
  if (!data_ptr.get()) return;
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream expects an accel stream, got a stream of ", stream.device());
  // Only blocks from this allocator carry deleteBlock; others have nothing to defer.
  if (data_ptr.get_deleter() != &deleteBlock) return;
  TORCH_CHECK(stream.device_index() == data_ptr.device().index(),
              "record_stream: the tensor is on ", data_ptr.device(),
              " but the stream belongs to accel:", static_cast<int>(stream.device_index()));
  deviceCachingAllocator(data_ptr.device().index())
      .recordStream(data_ptr.get(), runtimeStream(stream));
}

c10::CachingAllocator::Stat toTorch(const alloc::Stat& s) {
  c10::CachingAllocator::Stat out;
  out.current = s.current;
  out.peak = s.peak;
  out.allocated = s.allocated;
  out.freed = s.freed;
  return out;
}

}  // namespace accel
