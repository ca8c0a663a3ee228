#include "core/stream_pool.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/rt_check.h"

namespace accel {

namespace {

// Stream ids: 0 is the default stream, 1..32 the normal pool, 33..64 the high-priority pool.
constexpr c10::StreamId kHighBase = kStreamsPerPool;

struct DevicePool {
  std::once_flag init;
  std::array<rt::Stream, 2 * kStreamsPerPool> streams{};
  std::atomic<uint32_t> next[2] = {0, 0};
};

std::vector<std::unique_ptr<DevicePool>>& pools() {
  static std::vector<std::unique_ptr<DevicePool>> p = [] {
    std::vector<std::unique_ptr<DevicePool>> v;
    for (int i = 0; i < deviceCount(); ++i) v.push_back(std::make_unique<DevicePool>());
    return v;
  }();
  return p;
}

DevicePool& pool(c10::DeviceIndex device) {
  checkDeviceIndex(device);
  DevicePool& p = *pools()[device];
  std::call_once(p.init, [&] {
    for (int i = 0; i < 2 * kStreamsPerPool; ++i) {
      int priority = i < kStreamsPerPool ? rt::kLowestPriority : rt::kHighestPriority;
      ACCEL_RT_CHECK(rt::driver().streamCreate(device, &p.streams[i], priority), device);
    }
  });
  return p;
}

// Per thread, per device: the id of the current stream (0 = default).
thread_local std::vector<c10::StreamId> t_current;

c10::StreamId& currentId(c10::DeviceIndex device) {
  if (t_current.empty()) t_current.assign(deviceCount(), 0);
  return t_current[device];
}

c10::Stream makeStream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id);
}

}  // namespace

c10::Stream defaultStream(c10::DeviceIndex device) {
  checkDeviceIndex(device);
  return makeStream(device, 0);
}

c10::Stream currentStream(c10::DeviceIndex device) {
  checkDeviceIndex(device);
  return makeStream(device, currentId(device));
}

void setCurrentStream(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "expected an accel stream, got a stream of device ", stream.device());
  checkDeviceIndex(stream.device_index());
  currentId(stream.device_index()) = stream.id();
}

c10::Stream streamFromPool(c10::DeviceIndex device, bool high_priority) {
  DevicePool& p = pool(device);
  uint32_t slot = p.next[high_priority].fetch_add(1) % kStreamsPerPool;
  return makeStream(device, 1 + slot + (high_priority ? kHighBase : 0));
}

int streamPriority(const c10::Stream& stream) {
  return stream.id() > kHighBase ? rt::kHighestPriority : rt::kLowestPriority;
}

rt::Stream runtimeStream(const c10::Stream& stream) {
  c10::DeviceIndex device = stream.device_index();
  c10::StreamId id = stream.id();
  if (id == 0) {
    checkDeviceIndex(device);
    return rt::driver().defaultStream(device);
  }
  TORCH_CHECK(id > 0 && id <= 2 * kStreamsPerPool, "unknown accel stream id ", id);
  return pool(device).streams[id - 1];
}

rt::Stream currentRuntimeStream(c10::DeviceIndex device) {
  c10::StreamId id = currentId(device);
  return id == 0 ? rt::driver().defaultStream(device) : pool(device).streams[id - 1];
}

}  // namespace accel
