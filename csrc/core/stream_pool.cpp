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

// Stream ids: 0 is the default stream, 1..32 the normal pool, 33..64 the high-priority pool,
// 65 on the external streams in the order they were first seen.
constexpr c10::StreamId kHighBase = kStreamsPerPool;
constexpr c10::StreamId kExternalBase = 2 * kStreamsPerPool + 1;

struct DevicePool {
  std::once_flag init;
  std::array<rt::Stream, 2 * kStreamsPerPool> streams{};
  std::atomic<uint32_t> next[2] = {0, 0};
  std::mutex external_mu;
  std::vector<std::pair<void*, rt::Stream>> external;  // (native handle, stream)
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

c10::Stream defaultStream(c10::DeviceIndex device) { return makeStream(resolveDevice(device), 0); }

c10::Stream currentStream(c10::DeviceIndex device) {
  device = resolveDevice(device);
  return makeStream(device, currentId(device));
}

void setCurrentStream(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "expected an accel stream, got a stream of device ", stream.device());
  checkDeviceIndex(stream.device_index());
  currentId(stream.device_index()) = stream.id();
}

c10::Stream streamFromPool(c10::DeviceIndex device, bool high_priority) {
  device = resolveDevice(device);
  DevicePool& p = pool(device);
  uint32_t slot = p.next[high_priority].fetch_add(1) % kStreamsPerPool;
  return makeStream(device, 1 + slot + (high_priority ? kHighBase : 0));
}

c10::Stream externalStream(c10::DeviceIndex device, void* native) {
  device = resolveDevice(device);
  DevicePool& p = pool(device);
  std::lock_guard<std::mutex> lock(p.external_mu);
  for (size_t i = 0; i < p.external.size(); ++i) {
    if (p.external[i].first == native) return makeStream(device, kExternalBase + i);
  }
  rt::Stream s = nullptr;
  const rt::Error err = rt::driver().streamFromNative(device, native, &s);
  TORCH_CHECK(err != rt::Error::InvalidValue, "ExternalStream: ", native,
              " is not a stream of accel:", static_cast<int>(device), " (driver '",
              rt::driver().name(), "')");
  ACCEL_RT_CHECK(err, device);
  // One of torch's own streams keeps its id.
  if (s == rt::driver().defaultStream(device)) return makeStream(device, 0);
  for (size_t i = 0; i < p.streams.size(); ++i) {
    if (p.streams[i] == s) return makeStream(device, static_cast<c10::StreamId>(i + 1));
  }
  p.external.emplace_back(native, s);
  return makeStream(device, kExternalBase + p.external.size() - 1);
}

int streamPriority(const c10::Stream& stream) {
  if (stream.id() >= kExternalBase) return rt::driver().streamPriority(runtimeStream(stream));
  return stream.id() > kHighBase ? rt::kHighestPriority : rt::kLowestPriority;
}

rt::Stream runtimeStream(const c10::Stream& stream) {
  c10::DeviceIndex device = stream.device_index();
  c10::StreamId id = stream.id();
  if (id == 0) {
    checkDeviceIndex(device);
    return rt::driver().defaultStream(device);
  }
  if (id >= kExternalBase) {
    DevicePool& p = pool(device);
    std::lock_guard<std::mutex> lock(p.external_mu);
    const auto index = static_cast<size_t>(id - kExternalBase);
    TORCH_CHECK(index < p.external.size(), "unknown accel stream id ", id);
    return p.external[index].second;
  }
  TORCH_CHECK(id > 0, "unknown accel stream id ", id);
  return pool(device).streams[id - 1];
}

rt::Stream currentRuntimeStream(c10::DeviceIndex device) {
  c10::StreamId id = currentId(device);
  if (id == 0) return rt::driver().defaultStream(device);
  return id < kExternalBase ? pool(device).streams[id - 1] : runtimeStream(makeStream(device, id));
}

}  // namespace accel
